"""What ``mirror-report`` reports as bad input: one line on stderr and exit status 2."""


class UsageError(Exception):
    """Bad command-line input; the message is one line."""
