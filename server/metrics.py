"""GET /metrics: the Prometheus exposition, for operators only.

Served to loopback clients, to the networks of ``CTIWIRE_METRICS_ALLOW`` (comma-separated), or with
``Authorization: Bearer <CTIWIRE_METRICS_TOKEN>`` (compared in constant time); everyone else gets 403.
The client address is the connection's, or a trusted proxy's forwarded one (application.http).
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from config.settings import parse_networks
from server.base import BaseHandler
from server.context import AppContext
from server.errors import ApiError
from telemetry import exposition


class MetricsForbidden(ApiError):
    status = 403
    code = "forbidden"


class MetricsHandler(BaseHandler):
    public = True

    def get(self) -> None:
        if not self._allowed():
            raise MetricsForbidden("metrics are served to loopback, CTIWIRE_METRICS_ALLOW networks or with "
                                   "CTIWIRE_METRICS_TOKEN")
        body, media = exposition()
        self.set_header("Content-Type", media)
        self.finish(body)

    def _allowed(self) -> bool:
        settings = self.ctx.settings
        auth = self.request.headers.get("Authorization", "")
        if settings.metrics_token and auth[:7].lower() == "bearer " and \
                hmac.compare_digest(auth[7:].strip().encode(), settings.metrics_token.encode()):
            return True
        try:
            client = ipaddress.ip_address(self.request.remote_ip or "")
        except ValueError:
            return False
        return client.is_loopback or any(client in network for network in parse_networks(settings.metrics_allow))


def routes(ctx: AppContext) -> list[tuple[str, type, dict[str, Any]]]:
    return [(r"/metrics", MetricsHandler, {"ctx": ctx})]


OPENAPI_PATHS: dict[str, Any] = {
    "/metrics": {"get": {
        "tags": ["service"], "summary": "Prometheus metrics (operators)", "security": [],
        "description": "Prometheus text exposition: requests by route and status, latency, rate-limit refusals by "
                       "tier, cache results by format, export build time, backend errors, ingestion per source, "
                       "Celery task outcomes. Served to loopback, to CTIWIRE_METRICS_ALLOW networks, or with "
                       "`Authorization: Bearer <CTIWIRE_METRICS_TOKEN>`; anyone else gets 403.",
        "responses": {"200": {"description": "The exposition", "content": {"text/plain": {"schema": {
            "type": "string"}}}}, "403": {"$ref": "#/components/responses/Forbidden"}},
    }},
}
