"""The OpenAPI description states the tier numbers of config/tiers.py, never numbers typed by hand."""

from __future__ import annotations

from typing import Any

import pytest

from config import tiers
from config.tiers import TIERS


def _params(doc: dict[str, Any], path: str) -> dict[str, str]:
    return {p["name"]: p["description"] for p in doc["paths"][path]["get"]["parameters"] if "name" in p}


def _document() -> dict[str, Any]:
    from application.app import openapi_document

    return openapi_document()


def test_descriptions_state_the_tier_table() -> None:
    doc, free, pro = _document(), TIERS["free"], TIERS["pro"]
    iocs = _params(doc, "/api/v1/iocs")
    assert f"Free {free.ioc_results_max:,}, Pro {pro.ioc_results_max:,}" in iocs["limit"]
    assert f"Free {free.ioc_lookback_days:,} days, Pro {pro.ioc_lookback_days:,} days" in iocs["since"]
    articles = _params(doc, "/api/v1/articles")
    assert f"Free {free.article_lookback_days:,} days, Pro {pro.article_lookback_days:,} days" in articles["since"]
    assert f"Pro {pro.articles_max:,}, NDJSON/CSV {pro.articles_export_max:,}" in articles["limit"]
    assert f"Free {free.requests_per_minute:,}/min and {free.requests_per_day:,}/day" in doc["info"]["description"]
    stix = _params(doc, "/api/v1/iocs/stix")
    assert stix["since"] == iocs["since"] and stix["type"] == iocs["type"]  # one definition of the filters


def test_a_changed_limit_changes_the_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuilt with a different Pro cap, the descriptions follow: nothing is hard-coded."""
    from dataclasses import replace
    from types import MappingProxyType

    from server import openapi_parts

    changed = MappingProxyType({**TIERS, "pro": replace(TIERS["pro"], ioc_results_max=12_345)})
    monkeypatch.setattr(tiers, "TIERS", changed)
    monkeypatch.setattr(openapi_parts, "TIERS", changed)
    assert openapi_parts.per_tier("ioc_results_max") == f"Free {TIERS['free'].ioc_results_max:,}, Pro 12,345"
