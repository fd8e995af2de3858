"""Run the sandbox: ``python -m mirrorscope.sandbox --port 8080 --seed 0 --out DIR [--full | --real [--small]]``.

Writes DIR/hosts (/etc/hosts format), DIR/seeds.txt and DIR/truth.json once
every socket is listening, then serves until SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

from .real import build_real_world
from .realpages import MissingPackages
from .server import SandboxServer
from .world import build_world


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, not argparse's usage block: scripts grep for it."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return int(text)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = _Parser(prog="python -m mirrorscope.sandbox", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=_port, default=8080, help="port for every host (0: any free port)")
    parser.add_argument("--seed", type=int, default=0, help="world seed")
    parser.add_argument("--out", type=Path, required=True, help="directory for hosts, seeds.txt and truth.json")
    parser.add_argument("--latency", type=float, default=0.0, help="extra seconds before every response")
    parser.add_argument("--no-hostile", action="store_true", help="leave out the host of broken pages")
    parser.add_argument("--hard-mirrors", action="store_true", help="add the harder mirrors and their decoys")
    parser.add_argument("--spam", action="store_true", help="add spam hosts, a link farm and a calendar trap")
    parser.add_argument("--full", action="store_true", help="the full world: --hard-mirrors and --spam")
    parser.add_argument("--real", action="store_true", help="the world of real pages (Debian documentation packages)")
    parser.add_argument("--small", action="store_true", help="with --real: the small real world, for fast tests")
    args = parser.parse_args(argv)
    if args.real and (args.no_hostile or args.hard_mirrors or args.spam or args.full):
        parser.error("--real takes no --no-hostile, --hard-mirrors, --spam or --full: it has mirrors and spam of its own")
    if args.small and not args.real:
        parser.error("--small needs --real")
    return args


def _write(path: Path, text: str) -> None:
    """Write atomically, so a script polling for the file never reads half of it."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    args = _parse(argv)
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    if args.real:
        try:
            world = build_real_world(args.seed, small=args.small)
        except MissingPackages as error:
            print(f"python -m mirrorscope.sandbox: error: {error}", file=sys.stderr)
            return 2
    else:
        world = build_world(
            args.seed,
            hostile=not args.no_hostile,
            hard_mirrors=args.hard_mirrors or args.full,
            spam=args.spam or args.full,
        )
    server = SandboxServer(world, port=args.port, latency=args.latency)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        server.start()
    except OSError as error:
        server.stop()
        print(f"python -m mirrorscope.sandbox: error: {error.strerror or error} (port {args.port}, out {args.out})", file=sys.stderr)
        return 2
    try:
        _write(args.out / "hosts", world.hosts_file_text())
        _write(args.out / "seeds.txt", "".join(url + "\n" for url in world.seeds(server.port)))
        _write(args.out / "truth.json", json.dumps(world.ground_truth(server.port), indent=1, sort_keys=True) + "\n")
        print(f"sandbox: {len(world.hosts)} hosts on port {server.port}; seeds: {' '.join(world.seeds(server.port))}", flush=True)
        done.wait()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
