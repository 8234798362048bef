"""Handlers that take a JSON request body: read as it arrives, bounded, refused with the error envelope.

Tornado reads a request's whole body (up to 100 MB by default) before a handler sees it, and answers an
oversized one with a bare 400. A handler here is streamed instead (``stream_request_body``): it is
authenticated and rate-limited when the headers arrive, a declared ``Content-Length`` above the limit is
refused at once with 413 (the connection then closes, unread), and a chunked body is kept only up to the
limit and refused with the same 413 once it has arrived.
"""

from __future__ import annotations

from typing import Any, ClassVar

import orjson
from tornado.web import stream_request_body

from server.base import BaseHandler
from server.context import AppContext
from server.errors import BadRequest, PayloadTooLarge

MAX_BODY_BYTES = 2 * 1024 * 1024


@stream_request_body
class JsonBodyHandler(BaseHandler):
    """A handler whose POST body is one JSON document of at most ``max_body`` bytes (``json_body``)."""

    max_body: ClassVar[int] = MAX_BODY_BYTES

    def initialize(self, ctx: AppContext) -> None:
        super().initialize(ctx)
        self._body = bytearray()
        self._overflow = False

    async def prepare(self) -> None:
        await super().prepare()
        declared = self.request.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            raise self._too_large()

    def data_received(self, chunk: bytes) -> None:
        if self._overflow or len(self._body) + len(chunk) > self.max_body:
            self._overflow, self._body = True, bytearray()  # the rest is read and dropped
            return
        self._body += chunk

    def _too_large(self) -> PayloadTooLarge:
        return PayloadTooLarge(
            f"the request body is larger than {self.max_body:,} bytes", details={"max_bytes": self.max_body}
        )

    def json_body(self) -> Any:
        """The body's JSON document; 413 when it was over the limit, 400 ``invalid_body`` when no JSON."""
        if self._overflow:
            raise self._too_large()
        try:
            return orjson.loads(self._body)
        except orjson.JSONDecodeError as exc:
            raise BadRequest(f"the request body is not a JSON document: {exc}", code="invalid_body") from exc
