"""Every API route with every scope and tier (spec, Endpoints table and Authentication 7-8).

The routes come from the real application, so a new route that this table does not list fails the test,
and so does a listed route the application no longer serves.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from application.app import make_app
from config import tiers
from config.tiers import (
    SCOPE_ARTICLES,
    SCOPE_ARTICLES_EXPORT,
    SCOPE_EXPORTS,
    SCOPE_FEEDS,
    SCOPE_IOCS,
    SCOPE_MISP,
    SCOPE_SIGHTINGS,
    SCOPE_STATS,
    SCOPE_STIX,
    SCOPE_STREAM,
    SCOPE_TAXII,
    SCOPE_WEBHOOKS,
    SCOPES,
)
from exporters.registry import EXPORTERS
from server.base import BaseHandler
from store.apikeys import display_prefix, generate_key, hash_key
from store.records import ApiKey, utcnow
from taxii.media import TAXII_21

COLLECTION = "/api/taxii2/api/collections/ctiwire-indicators"
FEED = "/api/v1/feeds/00000000-0000-4000-8000-000000000000"
# (example request, the scope it needs, whether the spec keeps it to Pro). The example values need not
# exist: a request that passes the gates may answer 404, never 401 or 403. A request is a GET unless its
# method leads it ("POST /path").
ROUTES: list[tuple[str, str, bool]] = [
    ("/api/v1/articles", SCOPE_ARTICLES, False),
    ("/api/v1/articles?format=ndjson", SCOPE_ARTICLES_EXPORT, True),
    ("/api/v1/articles?format=csv", SCOPE_ARTICLES_EXPORT, True),
    ("/api/v1/articles/no-such-article", SCOPE_ARTICLES, False),
    ("/api/v1/sources", SCOPE_ARTICLES, False),
    ("/api/v1/iocs", SCOPE_IOCS, False),
    ("/api/v1/iocs/search?q=example", SCOPE_IOCS, False),
    ("/api/v1/lookup?value=198.51.100.7", SCOPE_IOCS, False),
    ("POST /api/v1/sightings", SCOPE_SIGHTINGS, False),
    ("/api/v1/iocs/stats", SCOPE_STATS, True),
    ("/api/v1/iocs/stix", SCOPE_STIX, True),
    ("/api/v1/iocs/misp", SCOPE_MISP, True),
    ("/api/v1/iocs/cef", SCOPE_EXPORTS, True),
    ("/api/v1/iocs/openioc", SCOPE_EXPORTS, True),
    ("/api/v1/iocs/sigma", SCOPE_EXPORTS, True),
    ("/api/v1/iocs/blocklist?type=ipv4", SCOPE_EXPORTS, True),
    ("/api/v1/iocs/rpz", SCOPE_EXPORTS, True),
    ("/api/v1/iocs/suricata", SCOPE_EXPORTS, True),
    ("/api/v1/iocs/ecs", SCOPE_EXPORTS, True),
    ("/api/taxii2/", SCOPE_TAXII, True),
    ("/taxii2/", SCOPE_TAXII, True),
    ("/api/taxii2/api/", SCOPE_TAXII, True),
    ("/api/taxii2/api/status/no-such-status/", SCOPE_TAXII, True),
    ("/api/taxii2/api/collections/", SCOPE_TAXII, True),
    (f"{COLLECTION}/", SCOPE_TAXII, True),
    (f"{COLLECTION}/objects/", SCOPE_TAXII, True),
    (f"{COLLECTION}/objects/indicator--00000000-0000-4000-8000-000000000000/", SCOPE_TAXII, True),
    (f"{COLLECTION}/objects/indicator--00000000-0000-4000-8000-000000000000/versions/", SCOPE_TAXII, True),
    (f"{COLLECTION}/manifest/", SCOPE_TAXII, True),
    ("/api/v1/stream?duration=1", SCOPE_STREAM, True),
    ("/api/v1/webhooks", SCOPE_WEBHOOKS, True),
    ("/api/v1/webhooks/no-such-webhook", SCOPE_WEBHOOKS, True),
    ("/api/v1/feeds", SCOPE_FEEDS, False),
    (FEED, SCOPE_FEEDS, False),
    (f"{FEED}/iocs", SCOPE_IOCS, False),
    ("/api/v1/allowlist", SCOPE_FEEDS, False),
    ("/api/v1/allowlist/no-such-entry", SCOPE_FEEDS, False),
    *((f"{FEED}/export/{fmt}", exporter.scope, True) for fmt, exporter in EXPORTERS.items()),
]
PRO_ROUTES = [(url, scope) for url, scope, pro in ROUTES if pro]


def _keyed_patterns(rules: list[Any]) -> Iterator[str]:
    """The path pattern of every rule whose handler needs an API key, nested rules included."""
    for rule in rules:
        target = rule.target
        if hasattr(target, "rules"):
            yield from _keyed_patterns(target.rules)
        elif isinstance(target, type) and issubclass(target, BaseHandler) and not target.public:
            yield rule.matcher.regex.pattern


def test_the_table_lists_every_keyed_route(server) -> None:
    app = make_app(server.ctx)
    patterns = set(_keyed_patterns(app.wildcard_router.rules))
    paths = {url.split("?")[0].split(" ")[-1] for url, _, _ in ROUTES}
    unlisted = {p for p in patterns if not any(re.fullmatch(p.rstrip("$"), path) for path in paths)}
    unserved = {path for path in paths if not any(re.fullmatch(p.rstrip("$"), path) for p in patterns)}
    assert unlisted == set() and unserved == set()


def _error(response: Any) -> tuple[str, dict[str, Any]]:
    """(code, details) of the API envelope or of the TAXII error resource."""
    body = response.json()
    if "error" in body:
        return body["error"]["code"], body["error"].get("details", {})
    return body["error_code"], body["details"]


async def _get(server: Any, key: str, url: str) -> Any:
    method, _, path = url.rpartition(" ")
    async with server.client(key) as http:
        return await http.request(method or "GET", path, headers={"Accept": TAXII_21})


async def _key(server: Any, email: str, scopes: list[str]) -> str:
    """A key with exactly ``scopes``, written to the store as it stands, tier rules aside (a key whose
    user was downgraded, or a bug in the key rules, must still meet the plan gate)."""
    user = await server.ctx.accounts.get_user(email=email)
    secret = generate_key()
    record = ApiKey(id=str(uuid.uuid4()), user_id=user.id, name=f"k{uuid.uuid4().hex[:8]}", key_hash=hash_key(secret),
                    prefix=display_prefix(secret), scopes=scopes, created_at=utcnow())
    await server.ctx.accounts.create_key(record, 1_000)
    return secret


@pytest.mark.parametrize(("url", "scope"), PRO_ROUTES)
async def test_a_free_key_is_refused_on_every_pro_route(server, url: str, scope: str) -> None:
    response = await _get(server, server.free_key, url)
    assert response.status_code == 403, response.text
    code, details = _error(response)
    assert code == "insufficient_scope" and details["required_scope"] == scope
    assert details["upgrade_url"] == server.ctx.settings.upgrade_url


@pytest.mark.parametrize(("url", "scope"), PRO_ROUTES)
async def test_a_free_key_holding_the_scope_still_needs_the_plan(server, url: str, scope: str) -> None:
    key = await _key(server, "free@test.local", list(SCOPES))
    response = await _get(server, key, url)
    assert response.status_code == 403, response.text
    code, details = _error(response)
    assert code == "insufficient_scope" and details["tier"] == "free"


@pytest.mark.parametrize(("url", "scope"), [(url, scope) for url, scope, pro in ROUTES if not pro])
async def test_a_free_key_passes_every_free_route(server, url: str, scope: str) -> None:
    response = await _get(server, server.free_key, url)
    assert response.status_code not in (401, 403), response.text


@pytest.mark.parametrize(("url", "scope"), [(url, scope) for url, scope, _ in ROUTES])
async def test_every_route_needs_its_scope(server, url: str, scope: str) -> None:
    others = await _key(server, "pro@test.local", [s for s in SCOPES if s != scope])
    response = await _get(server, others, url)
    assert response.status_code == 403, response.text
    code, details = _error(response)
    assert code == "insufficient_scope" and details["required_scope"] == scope
    only = await _key(server, "pro@test.local", [scope])
    assert (await _get(server, only, url)).status_code not in (401, 403)


async def test_the_plan_gates_are_the_tiers_fields(server, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tier's endpoints follow its fields, not its name: Free given Pro's becomes Pro, and the reverse."""
    pro = tiers.PRO
    monkeypatch.setitem(tiers._TABLE, "free", replace(pro, name="free"))
    monkeypatch.setitem(tiers._TABLE, "pro", replace(pro, ioc_stats=False, ioc_exports=False, taxii=False,
                                                     health_details=False, article_formats=tiers.FREE.article_formats,
                                                     max_streams=0, max_webhooks=0))
    promoted = await _key(server, "free@test.local", list(SCOPES))
    demoted = await _key(server, "pro@test.local", list(SCOPES))
    for url, _ in PRO_ROUTES:
        assert (await _get(server, promoted, url)).status_code not in (401, 403), url
        assert (await _get(server, demoted, url)).status_code == 403, url
    assert "started_at" in (await _get(server, promoted, "/healthz")).json()
    assert "started_at" not in (await _get(server, demoted, "/healthz")).json()
