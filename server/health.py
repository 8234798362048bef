"""GET /healthz: liveness without a key; the details only for a Pro key.

Without a key the answer says ``ok`` or ``degraded`` and which dependency failed, nothing more: paths,
versions and cache statistics help an attacker and no load balancer needs them."""

from __future__ import annotations

from typing import Any

from server.base import BaseHandler
from server.context import AppContext
from server.errors import ApiError
from store.base import StoreUnavailable


class HealthHandler(BaseHandler):
    """200 when the database and cache answer, 503 (same shape) when one does not."""

    public = True

    async def get(self) -> None:
        detailed = await self._detailed_caller()
        checks: dict[str, Any] = {}
        for name, probe in (("database", self.ctx.stores.ping), ("cache", self.ctx.cache.ping)):
            try:
                found = await probe()
                checks[name] = {"status": "ok", **(found if detailed else {})}
            except StoreUnavailable as exc:
                checks[name] = {"status": "unavailable", **({"error": str(exc)} if detailed else {})}
        healthy = all(check["status"] == "ok" for check in checks.values())
        payload = {"status": "ok" if healthy else "degraded", "version": "1.0.0",
                   **({"started_at": self.ctx.started_at} if detailed else {}), **checks}
        self.write_json(payload, 200 if healthy else 503)

    async def _detailed_caller(self) -> bool:
        """Whether the request carries a valid key of a tier with ``health_details`` (Pro; no key, or
        any other: the short answer)."""
        if not self.raw_key():
            return False
        try:
            return (await self.authenticate()).tier.health_details
        except ApiError:
            return False


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/healthz", HealthHandler, {"ctx": ctx})]


OPENAPI_PATHS: dict[str, Any] = {
    "/healthz": {
        "get": {
            "tags": ["service"],
            "summary": "Liveness and the backends in use",
            "description": "Needs no API key: then only `status` and each dependency's status. With a Pro key, "
                           "also the backends' details. 503 with the same shape when the database or cache does "
                           "not answer.",
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
