"""``ctiwire stream``: tail the live feed of a running service, one JSON object a line on stdout.

It reads the NDJSON form of GET /api/v1/stream and, when the connection drops or the server reports an
``overflow``, reconnects with the last id it printed (``Last-Event-ID``), so nothing is lost or repeated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

import httpx

from cli.commands import CommandError
from config.settings import Settings

KEY_VARIABLE = "CTIWIRE_API_KEY"
RECONNECT_SECONDS = 1.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tail = sub.add_parser("stream", help="tail the live feed of a running service (NDJSON on stdout)")
    tail.add_argument("--url", help="the service (default: http://CTIWIRE_HOST:CTIWIRE_PORT)")
    tail.add_argument("--key", help=f"a Pro API key with scope stream (default: ${KEY_VARIABLE})")
    tail.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a stream filter such as kinds=ioc, type=ipv4 or severity=critical; repeatable",
    )
    tail.add_argument("--last-event-id", help="resume after this id")
    tail.add_argument("--count", type=int, help="exit after this many events")
    tail.add_argument("--duration", type=int, help="exit after this many seconds")


def _query(filters: list[str]) -> dict[str, str]:
    pairs = [f.partition("=") for f in filters]
    bad = [f for f, (_, sep, value) in zip(filters, pairs, strict=True) if not sep or not value]
    if bad:
        raise CommandError(f"--filter wants NAME=VALUE, got {', '.join(bad)}")
    return {name: value for name, _, value in pairs}


class Tail:
    """One run of the command: the events printed so far and where to resume."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.printed, self.last = args, 0, args.last_event_id

    def done(self) -> bool:
        return self.args.count is not None and self.printed >= self.args.count

    async def connect(self, client: httpx.AsyncClient) -> None:
        """Print events until the connection ends; CommandError for an answer that will not change."""
        headers = {"Accept": "application/x-ndjson", **({"Last-Event-ID": self.last} if self.last else {})}
        async with client.stream("GET", "/api/v1/stream", headers=headers) as response:
            if response.status_code != 200:
                raise CommandError(f"the service answered {response.status_code}: {(await response.aread()).decode()}")
            async for line in response.aiter_lines():
                if line.strip() and self.show(json.loads(line)):
                    return

    def show(self, event: dict[str, Any]) -> bool:
        """Print ``event``; True when the command is done or must reconnect."""
        if event["event"] == "overflow":
            print(f"ctiwire: fell behind; resuming after {self.last}", file=sys.stderr)
            return True
        print(json.dumps(event, separators=(",", ":")), flush=True)
        self.last = event.get("id") or self.last
        self.printed += 1
        return self.done()


async def stream(settings: Settings, args: argparse.Namespace) -> int:
    key = args.key or os.environ.get(KEY_VARIABLE)
    if not key:
        raise CommandError(f"give a key with --key or ${KEY_VARIABLE}")
    url = (args.url or f"http://{settings.host}:{settings.port}").rstrip("/")
    tail = Tail(args)
    query = _query(args.filter)
    async with httpx.AsyncClient(
        base_url=url, params=query, timeout=httpx.Timeout(30, read=None), headers={"Authorization": f"Bearer {key}"}
    ) as client:
        try:
            await asyncio.wait_for(_follow(tail, client), args.duration)
        except TimeoutError:
            pass
    return 0


async def _follow(tail: Tail, client: httpx.AsyncClient) -> None:
    while not tail.done():
        try:
            await tail.connect(client)
        except httpx.HTTPError as exc:
            print(f"ctiwire: the stream was interrupted ({exc or type(exc).__name__}); reconnecting", file=sys.stderr)
        if not tail.done():
            await asyncio.sleep(RECONNECT_SECONDS)
