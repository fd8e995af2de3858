"""The sandbox's site builders: each returns a site's resources keyed by path."""
