"""``ctiwire``: the one command line of the service (serve, seed, users, keys, and more)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from application import logs
from cli import commands, ingest_commands, iocs, keys, sightings, stream_command, users
from config.settings import Settings, SettingsError, check_port, load_settings, unknown_variables
from config.tiers import TIERS
from exporters.precompute import known_windows
from exporters.registry import EXPORTERS
from store.base import StoreUnavailable
from store.ioctypes import IOC_TYPES

Handler = Callable[[Settings, argparse.Namespace], Coroutine[Any, Any, int]]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctiwire", description="ctiwire threat-intelligence service")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the HTTP API (embedded default unless MongoDB/Redis are set)")
    serve.add_argument("--port", type=_port, help="override CTIWIRE_PORT (1-65535)")
    serve.add_argument("--no-seed", action="store_true", help="do not load the demo dataset into an empty database")
    seed = sub.add_parser("seed", help="write the deterministic demo dataset")
    seed.add_argument("--articles", type=int, default=None, help="how many articles (default 5000)")
    seed.add_argument("--demo", action="store_true",
                      help="also make (again) the demo users and keys; secrets written to demo-keys.json")
    export = sub.add_parser("export", help="write one IOC export to a file, with a progress bar")
    export.add_argument("format", choices=tuple(EXPORTERS))
    export.add_argument("--tier", choices=tuple(TIERS), default="pro")
    export.add_argument("--window", choices=tuple(known_windows()), default=None,
                        help="time window (default: the tier's whole lookback)")
    export.add_argument("--limit", type=int, default=None, help="maximum IOCs (default: the tier's cap)")
    export.add_argument("--type", type=_ioc_types, default=(), dest="types",
                        help="IOC types, comma-separated, as the API's type parameter (e.g. ipv4,ipv6 for a blocklist)")
    export.add_argument("--include-warninglisted", action="store_true",
                        help="keep the IOCs whose value is on a MISP warninglist (left out by default, as in the API)")
    export.add_argument("-o", "--output", required=True, help="file to write ('-' for stdout)")
    for name, text in (("worker", "start a Celery worker (needs CTIWIRE_REDIS_URL)"),
                       ("beat", "start the Celery beat scheduler (needs CTIWIRE_REDIS_URL)")):
        celery = sub.add_parser(name, help=text)
        celery.add_argument("celery_args", nargs=argparse.REMAINDER, help="passed on to celery")
    ingest_commands.add_parsers(sub)
    stream_command.add_parser(sub)
    users.add_parser(sub)
    keys.add_parser(sub)
    iocs.add_parser(sub)
    sightings.add_parser(sub)
    return parser


def _port(text: str) -> int:
    try:
        return check_port(int(text))
    except ValueError as exc:
        message = str(exc) if text.lstrip("-").isdigit() else f"{text!r} is not a number"
        raise argparse.ArgumentTypeError(message) from None


def _ioc_types(text: str) -> tuple[str, ...]:
    types = tuple(t.strip() for t in text.split(","))
    unknown = [t for t in types if t not in IOC_TYPES]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown IOC type(s) {', '.join(unknown)}; known: {', '.join(IOC_TYPES)}")
    return types


COMMANDS: dict[str, Handler] = {
    "serve": commands.serve,
    "seed": commands.seed,
    "users": users.users,
    "keys": keys.keys,
    "export": commands.export,
    "worker": commands.worker,
    "beat": commands.beat,
    "ingest": ingest_commands.ingest,
    "enrich": ingest_commands.enrich,
    "stream": stream_command.stream,
    "iocs": iocs.iocs,
    "sightings": sightings.sightings,
}


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; ``worker`` and ``beat`` pass every option they do not know on to Celery
    (``ctiwire worker --concurrency 4``), every other command refuses unknown ones."""
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if args.command in ("worker", "beat"):
        args.celery_args = [*unknown, *args.celery_args]
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _usage_error(message: str) -> int:
    """A setting, file or standard input the user can fix: one line, exit 2 (as argparse's own errors)."""
    print(f"ctiwire: error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    for warning in unknown_variables(os.environ):
        print(warning, file=sys.stderr)
    try:
        settings = load_settings()
    except SettingsError as exc:
        return _usage_error(str(exc))
    logs.configure(settings.log_level, settings.log_format)
    try:
        if args.command == "serve" and settings.processes > 1:
            return commands.serve_processes(settings, args)
        return asyncio.run(COMMANDS[args.command](settings, args))
    except commands.FileError as exc:
        return _usage_error(str(exc))
    except commands.CommandError as exc:
        print(f"ctiwire: {exc}", file=sys.stderr)
        return exc.exit_code
    except StoreUnavailable as exc:  # an outage or a full disk: one line, in any command, not a traceback
        print(f"ctiwire: error: the store is unavailable: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
