"""Reading GET /api/v1/stream as a client does: SSE blocks or NDJSON lines, parsed into events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class StreamEvent:
    event: str
    data: dict[str, Any]
    id: str | None = None


@dataclass
class StreamReader:
    """Events of one open stream; ``comments`` counts SSE comment lines and NDJSON blank lines."""

    response: httpx.Response
    ndjson: bool = False
    comments: int = 0
    _lines: AsyncIterator[str] | None = None
    _block: dict[str, str] = field(default_factory=dict)
    _waiting: asyncio.Future[StreamEvent] | None = None

    async def next(self, timeout: float = 10) -> StreamEvent:
        """The next event; a timeout leaves the read going, for the next call (the line iterator survives)."""
        if self._waiting is None or self._waiting.done():
            self._waiting = asyncio.ensure_future(self._read())
        event = await asyncio.wait_for(asyncio.shield(self._waiting), timeout)
        self._waiting = None
        return event

    async def take(self, count: int, timeout: float = 10) -> list[StreamEvent]:
        return [await self.next(timeout) for _ in range(count)]

    async def nothing_within(self, seconds: float) -> bool:
        """True when no event arrives within ``seconds`` (comments do not count)."""
        try:
            await self.next(seconds)
        except TimeoutError:
            return True
        return False

    async def _read(self) -> StreamEvent:
        if self._lines is None:
            self._lines = self.response.aiter_lines()
        async for line in self._lines:
            found = self._line(line)
            if found is not None:
                return found
        raise EOFError("the stream ended")

    def _line(self, line: str) -> StreamEvent | None:
        if self.ndjson:
            if not line.strip():
                self.comments += 1
                return None
            raw = json.loads(line)
            return StreamEvent(raw["event"], raw["data"], raw.get("id"))
        if line.startswith(":"):
            self.comments += 1
            return None
        if line:
            name, _, value = line.partition(":")
            self._block[name] = value.removeprefix(" ")
            return None
        block, self._block = self._block, {}
        if "data" not in block:
            return None
        return StreamEvent(block.get("event", "message"), json.loads(block["data"]), block.get("id"))
