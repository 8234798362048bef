"""A webhook receiver on 127.0.0.1 for the tests: it checks each delivery's signature with its own HMAC code
(not the product's), answers from a script of statuses, and records what it acknowledged."""

from __future__ import annotations

import hashlib
import hmac
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson
from support import free_port
from tornado.httpserver import HTTPServer
from tornado.web import Application, RequestHandler


def signed_by(secret: str, body: bytes, header: str) -> bool:
    """The README's verification recipe."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


@dataclass
class Receiver:
    """Statuses to answer in turn (then ``then``); every request seen, the events of the acknowledged ones."""

    secret: str = ""
    script: deque[int] = field(default_factory=deque)
    then: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)
    acknowledged: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    server: HTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def answer(self, body: bytes, headers: Any, path: str) -> int:
        status = self.script.popleft() if self.script else self.then
        payload = orjson.loads(body)
        self.requests.append(
            {
                "path": path,
                "status": status,
                "event_id": headers.get("X-Ctiwire-Event-Id"),
                "signed": signed_by(self.secret, body, headers.get("X-Ctiwire-Signature", "t=0,v1=")),
                "ids": [e["id"] for e in payload["events"]],
            }
        )
        if 200 <= status < 300:
            self.acknowledged.extend(payload["events"])
        return status


class _Hook(RequestHandler):
    def initialize(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def post(self, *_: str) -> None:
        status = self.receiver.answer(self.request.body, self.request.headers, self.request.path)
        self.set_status(status)
        if status in (301, 302, 307):
            self.set_header("Location", "/elsewhere")
        self.finish(None if status == 204 else b"ok" if status < 300 else b"no")


def start_receiver(receiver: Receiver) -> Receiver:
    receiver.port = free_port()
    receiver.server = HTTPServer(Application([(r"/(.*)", _Hook, {"receiver": receiver})]))
    receiver.server.listen(receiver.port, "127.0.0.1")
    return receiver


async def stop_receiver(receiver: Receiver) -> None:
    if receiver.server is not None:
        receiver.server.stop()
        await receiver.server.close_all_connections()
