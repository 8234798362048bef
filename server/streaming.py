"""Chunked streaming of large bodies with flat memory (tornado web.py, StaticFileHandler.get).

Rows are buffered to about ``chunk_bytes`` (Tornado streams fastest in chunks of about 60-190 KB;
flushing every row or sending 0.5 MB chunks is several times slower: BENCHMARKS.md), written, and
``flush()`` is awaited so a slow client applies back-pressure instead of filling server memory.
"""

from __future__ import annotations

from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler


class ClientGone(Exception):
    """The client disconnected: stop producing rows (and so stop the query)."""


class ChunkWriter:
    """Buffers bytes and flushes them to the client in chunks."""

    def __init__(self, handler: RequestHandler, chunk_bytes: int = 128 * 1024) -> None:
        self.handler = handler
        self.chunk_bytes = chunk_bytes
        self._parts: list[bytes] = []
        self._size = 0
        self.bytes_sent = 0

    async def write(self, data: bytes) -> None:
        self._parts.append(data)
        self._size += len(data)
        if self._size >= self.chunk_bytes:
            await self.flush()

    async def flush(self) -> None:
        if not self._parts:
            return
        chunk = b"".join(self._parts)
        self._parts, self._size = [], 0
        try:
            self.handler.write(chunk)
            await self.handler.flush()
        except StreamClosedError as exc:
            raise ClientGone() from exc
        self.bytes_sent += len(chunk)
