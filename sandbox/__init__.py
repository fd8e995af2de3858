"""The sandbox: a deterministic test web served from one process on loopback.

`build_world` makes the standard small web (a portal, four original sites,
an exact, a prefix and a partial mirror, a decoy, hobby sites and a host of
broken pages); `hard_mirrors=True` adds harder mirrors and decoys, `spam=True`
spam hosts and traps, and `build_full_world` turns both on.
`build_linkheavy_world` makes one host of link-dense pages for throughput
benchmarks; `build_real_world` serves real pages (Debian's documentation
packages) with mirrors, decoys and spam planted among them.
`SandboxServer` serves any of them on 127.x addresses; `World.ground_truth`
says what a correct crawl of it finds, and `scoring` scores a crawl's report
against it. `build_torture_world` (``torture``) serves pages and hosts made to break a
crawler, each with the outcome a correct crawl records.
"""

from .model import Host, Resource, World, is_browser
from .real import build_real_world
from .server import SandboxServer
from .torture import build_torture_world
from .truth import is_copied
from .world import build_full_world, build_linkheavy_world, build_world

__all__ = [
    "Host", "Resource", "World", "SandboxServer", "build_world", "build_full_world", "build_linkheavy_world",
    "build_real_world", "build_torture_world", "is_browser", "is_copied",
]
