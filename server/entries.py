"""Answering from a cache entry: ETag, Last-Modified, X-Cache and 304 for a matching If-None-Match."""

from __future__ import annotations

from email.utils import format_datetime

from exporters.cached import Entry
from server.base import BaseHandler
from server.streaming import ChunkWriter, ClientGone
from store.records import parse_iso


def _matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 13.1.2: weak comparison, a list of tags, or ``*``."""
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags


async def write_entry(handler: BaseHandler, entry: Entry, status: str, *, attachment: bool) -> None:
    """Send ``entry`` (or 304) with its validators and cache status."""
    handler.set_header("ETag", entry.meta.etag)
    handler.set_header("Last-Modified", format_datetime(parse_iso(entry.meta.built_at), usegmt=True))
    handler.set_header("X-Cache", status)
    handler.set_header("Cache-Control", "private, max-age=0, must-revalidate")
    if _matches(handler.request.headers.get("If-None-Match", ""), entry.meta.etag):
        handler.set_status(304)
        handler.finish()
        return
    handler.set_header("Content-Type", entry.meta.media_type)
    if attachment:
        handler.set_header("Content-Disposition", f'attachment; filename="{entry.meta.filename}"')
    handler.set_header("Content-Length", str(len(entry.body)))
    await _send_in_chunks(handler, entry.body)


async def _send_in_chunks(handler: BaseHandler, body: bytes) -> None:
    """Large documents leave in chunks with flush(), so a slow client pushes back (server.streaming)."""
    writer = ChunkWriter(handler, handler.ctx.settings.stream_chunk_bytes)
    step = handler.ctx.settings.stream_chunk_bytes
    try:
        for start in range(0, len(body), step):
            await writer.write(body[start:start + step])
        await writer.flush()
    except ClientGone:
        return
    handler.finish()
