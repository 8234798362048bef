"""Record factories and small helpers shared by the conformance tests (``from conformance.factories import``)."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from mongo_support import NO_TEXT_ON_MOCK

from store.records import ApiKey, Article, ArticleIoc, Ioc, MitreTechnique, Source, User

BASE = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def needs_text_index(backend: str) -> None:
    """Skip a ``q_field=default`` case where ``$text`` does not exist (mongomock)."""
    if backend == "mongomock":
        pytest.skip(NO_TEXT_ON_MOCK)


def at(minutes: float = 0, days: float = 0) -> datetime:
    """A millisecond-precise UTC time relative to BASE."""
    return BASE + timedelta(minutes=minutes, days=days)


def article(n: int, **fields: Any) -> Article:
    """Article number ``n``: distinct id, URL and hash; ``fields`` override any attribute."""
    values: dict[str, Any] = {
        "id": str(uuid.UUID(int=n)), "title": f"Article {n}", "url": f"https://news.example/{n}",
        "canonical_url": f"https://news.example/{n}", "summary": f"Summary of article {n}.",
        "published_at": at(minutes=n), "fetched_at": at(minutes=n + 1), "modified_at": at(minutes=n + 2),
        "created_at": at(minutes=n + 1), "source_name": "Example News", "content_hash": f"hash-{n}",
    }
    values.update(fields)
    return Article(**values)


def ioc(value: str, ioc_type: str = "domain", **fields: Any) -> Ioc:
    values: dict[str, Any] = {
        "type": ioc_type, "value": value, "confidence": "medium", "feed_name": "Example News",
        "source_category": "commercial", "first_seen": BASE, "last_seen": BASE, "modified": BASE,
        "sources": ["Example News"],
    }
    values.update(fields)
    return Ioc(**values)


def user(email: str = "ana@example.com", tier: str = "free") -> User:
    return User(id=str(uuid.uuid4()), email=email, tier=tier, created_at=BASE)


def api_key(owner: User, name: str, minutes: float = 0, **fields: Any) -> ApiKey:
    values: dict[str, Any] = {
        "id": str(uuid.uuid4()), "user_id": owner.id, "name": name, "key_hash": uuid.uuid4().hex,
        "prefix": "sk_live_abcd", "scopes": ["read:articles"], "created_at": at(minutes=minutes),
    }
    values.update(fields)
    return ApiKey(**values)


def source(name: str, **fields: Any) -> Source:
    values: dict[str, Any] = {"name": name, "homepage": f"https://{name.lower()}.example",
                              "feed_url": f"https://{name.lower()}.example/feed"}
    values.update(fields)
    return Source(**values)


def technique(tid: str, name: str = "Technique") -> MitreTechnique:
    return MitreTechnique(id=tid, name=name, tactic="execution")


def mention(value: str, ioc_type: str = "domain") -> ArticleIoc:
    return ArticleIoc(type=ioc_type, value=value)


def ids(rows: list[Article]) -> list[str]:
    return [a.id for a in rows]


def replace(record: Any, **fields: Any) -> Any:
    return dataclasses.replace(record, **fields)
