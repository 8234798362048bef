"""GET /healthz: liveness without a key, naming the database and cache in use (issue 3)."""

from __future__ import annotations

from typing import Any

from server.base import BaseHandler
from server.context import AppContext
from store.base import StoreUnavailable


class HealthHandler(BaseHandler):
    """200 when the database and cache answer, 503 (same shape) when one does not."""

    public = True

    async def get(self) -> None:
        checks: dict[str, Any] = {}
        healthy = True
        for name, probe in (("database", self.ctx.store.ping), ("cache", self.ctx.cache.ping)):
            try:
                checks[name] = {"status": "ok", **await probe()}
            except StoreUnavailable as exc:
                healthy = False
                checks[name] = {"status": "unavailable", "error": str(exc)}
        payload = {"status": "ok" if healthy else "degraded", "version": "1.0.0",
                   "started_at": self.ctx.started_at, **checks}
        self.write_json(payload, 200 if healthy else 503)


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/healthz", HealthHandler, {"ctx": ctx})]


OPENAPI_PATHS: dict[str, Any] = {
    "/healthz": {
        "get": {
            "tags": ["service"],
            "summary": "Liveness and the backends in use",
            "description": "Needs no API key. 503 with the same shape when the database or cache does not answer.",
            "security": [],
            "responses": {
                "200": {"description": "Healthy", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Health"}}}},
                "503": {"description": "A backend is down", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/Health"}}}},
            },
        }
    }
}
