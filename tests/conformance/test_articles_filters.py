"""Every ArticleQuery filter on every backend, checked against a plain-Python reading of the spec.

Each case pairs a query with a predicate written straight from the spec's parameter table; the articles
must return exactly the corpus rows the predicate accepts (archived rows only with ``is_archived``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conformance.factories import article, at, mention, technique

from store.ports import ArticleStore
from store.query import ArticleQuery
from store.records import Article, severity_label

SOURCES = [("Alpha Wire", "rss", 1), ("Beta Blog", "rss", 2), ("Gamma Forum", "community", 3),
           ("Delta Gov", "rss", 4)]
CATEGORIES = ["malware", "vulnerabilities", "threat-intel", "cloud-security"]
SCORES = [9.5, 9.0, 8.95, 7.0, 6.9, 4.0, 3.9, 0.0, 5.0, 10.0, 0.1]
TECH = [["windows"], ["linux", "vpn"], [], ["cloud"], ["vpn"]]
INDUSTRY = [["finance"], ["healthcare", "government"], [], ["energy"]]
ACTORS = [["lazarus"], [], ["apt29", "lazarus"], [], ["fin7"]]
N = 33


def corpus_row(n: int) -> Article:
    """Row ``n`` of a corpus in which every filter value occurs, alone and combined."""
    name, kind, tier = SOURCES[n % 4]
    return article(
        n, source_name=name, source_type=kind, source_tier=tier, category=CATEGORIES[n % 4],
        content_type="security" if n % 5 else "general", severity_score=SCORES[n % len(SCORES)],
        tech_tags=TECH[n % 5], industry_tags=INDUSTRY[n % 4], threat_actors=ACTORS[n % 5],
        iocs=[mention(f"bad{n}.example")] if n % 3 == 0 else [],
        ai_summary=None if n % 4 == 1 else ("" if n % 4 == 2 else f"AI summary {n}"),
        audio_url=f"https://audio.example/{n}.mp3" if n % 6 == 0 else None,
        is_archived=n % 7 == 0, submission_type="user_submitted" if n % 8 == 0 else "rss_auto",
        mitre_techniques=[technique("T1059.001")] if n % 5 == 2 else ([technique("T1059")] if n % 5 == 3 else []),
        published_at=at(minutes=n), fetched_at=at(minutes=60 - n), modified_at=at(minutes=2 * n),
        created_at=at(minutes=n + 1),
    )


CORPUS = [corpus_row(n) for n in range(1, N + 1)]
CVE_ROWS = [
    article(101, title="Patch now: CVE-2024-12345 exploited", published_at=at(minutes=101)),
    article(102, title="Quiet week", ai_summary="Fixes cve-2024-1234 in the VPN", published_at=at(minutes=102)),
    article(103, title="CVE-2023-9999 roundup", published_at=at(minutes=103)),
]
ALL = CORPUS + CVE_ROWS

Case = tuple[str, dict[str, Any], Callable[[Article], bool]]
CASES: list[Case] = [
    ("no filter", {}, lambda a: True),
    ("sources", {"sources": ("Alpha Wire", "Delta Gov")}, lambda a: a.source_name in ("Alpha Wire", "Delta Gov")),
    ("source_type", {"source_type": "community"}, lambda a: a.source_type == "community"),
    ("tiers", {"source_tiers": (1, 3)}, lambda a: a.source_tier in (1, 3)),
    ("categories", {"categories": ("malware", "cloud-security")},
     lambda a: a.category in ("malware", "cloud-security")),
    ("content types", {"content_types": ("general",)}, lambda a: a.content_type == "general"),
    ("tech tags any", {"tech_tags": ("vpn", "cloud")}, lambda a: bool({"vpn", "cloud"} & set(a.tech_tags))),
    ("industry any", {"industry_tags": ("government", "energy")},
     lambda a: bool({"government", "energy"} & set(a.industry_tags))),
    ("actors any", {"threat_actors": ("lazarus",)}, lambda a: "lazarus" in a.threat_actors),
    ("min severity", {"min_severity": 7.0}, lambda a: a.severity_score >= 7.0),
    ("min severity fraction", {"min_severity": 8.95}, lambda a: a.severity_score >= 8.95),
    ("bucket high", {"severity_labels": ("high",)}, lambda a: severity_label(a.severity_score) == "high"),
    ("bucket medium", {"severity_labels": ("medium",)}, lambda a: severity_label(a.severity_score) == "medium"),
    ("buckets critical+low", {"severity_labels": ("critical", "low")},
     lambda a: severity_label(a.severity_score) in ("critical", "low")),
    ("has iocs", {"has_iocs": True}, lambda a: bool(a.iocs)),
    ("no iocs", {"has_iocs": False}, lambda a: not a.iocs),
    ("has ai summary", {"has_ai_summary": True}, lambda a: bool(a.ai_summary)),
    ("no ai summary", {"has_ai_summary": False}, lambda a: not a.ai_summary),
    ("has audio", {"has_audio": True}, lambda a: a.audio_url is not None),
    ("no audio", {"has_audio": False}, lambda a: a.audio_url is None),
    ("submission", {"submission_type": "user_submitted"}, lambda a: a.submission_type == "user_submitted"),
    ("mitre exact", {"mitre_technique": "T1059"}, lambda a: any(t.id == "T1059" for t in a.mitre_techniques)),
    ("mitre sub", {"mitre_technique": "T1059.001"},
     lambda a: any(t.id == "T1059.001" for t in a.mitre_techniques)),
    ("cve substring", {"cve_text": "CVE-2024-1234"},
     lambda a: "CVE-2024-1234" in (a.title + " " + (a.ai_summary or "")).upper()),
    ("cve exact only", {"cve_text": "CVE-2023-9999"}, lambda a: "CVE-2023-9999" in a.title),
    ("combined", {"sources": ("Beta Blog", "Delta Gov"), "min_severity": 4.0, "has_iocs": False},
     lambda a: a.source_name in ("Beta Blog", "Delta Gov") and a.severity_score >= 4.0 and not a.iocs),
]


@pytest.fixture
async def loaded(articles: ArticleStore) -> ArticleStore:
    await articles.upsert_articles(ALL)
    return articles


def expected(pred: Callable[[Article], bool], archived: bool = False) -> set[str]:
    return {a.id for a in ALL if pred(a) and (archived or not a.is_archived)}


@pytest.mark.parametrize(("name", "filters", "pred"), CASES, ids=[c[0] for c in CASES])
async def test_filter_matches_the_spec(loaded: ArticleStore, name: str, filters: dict[str, Any],
                                       pred: Callable[[Article], bool]) -> None:
    want = expected(pred)
    assert want and (name == "no filter" or len(want) < len(expected(lambda a: True))), "case must discriminate"
    rows = await loaded.all_articles(ArticleQuery(limit=1000, **filters))
    assert {a.id for a in rows} == want
    assert await loaded.count_articles(ArticleQuery(**filters), exact=True) == len(want)
    assert await loaded.count_articles(ArticleQuery(**filters), exact=False) == len(want)


@pytest.mark.parametrize(("name", "filters", "pred"), CASES[:8], ids=[c[0] for c in CASES[:8]])
async def test_archived_rows_appear_only_when_asked(loaded: ArticleStore, name: str, filters: dict[str, Any],
                                                    pred: Callable[[Article], bool]) -> None:
    rows = await loaded.all_articles(ArticleQuery(limit=1000, include_archived=True, **filters))
    assert {a.id for a in rows} == expected(pred, archived=True)
    assert any(a.is_archived for a in rows) or not expected(lambda a: pred(a) and a.is_archived, archived=True)


async def test_archived_are_hidden_by_default(loaded: ArticleStore) -> None:
    hidden = {a.id for a in ALL if a.is_archived}
    assert hidden
    assert not hidden & {a.id for a in await loaded.all_articles(ArticleQuery(limit=1000))}


TIME_CASES = [
    ("published_at", 10, 20), ("fetched_at", 30, 45), ("modified_at", 8, 30), ("created_at", 5, 5),
]


@pytest.mark.parametrize(("field", "lo", "hi"), TIME_CASES)
async def test_since_and_until_bound_the_time_field_inclusively(loaded: ArticleStore, field: str, lo: int,
                                                                 hi: int) -> None:
    query = ArticleQuery(time_field=field, since=at(minutes=lo), until=at(minutes=hi), limit=1000)
    want = expected(lambda a: at(minutes=lo) <= getattr(a, field) <= at(minutes=hi))
    assert want
    assert {a.id for a in await loaded.all_articles(query)} == want
    only_since = ArticleQuery(time_field=field, since=at(minutes=lo), limit=1000)
    want_since = expected(lambda a: getattr(a, field) >= at(minutes=lo))
    assert {a.id for a in await loaded.all_articles(only_since)} == want_since


@pytest.mark.parametrize("field", ["published_at", "fetched_at", "modified_at"])
@pytest.mark.parametrize("sort", ["published:desc", "published:asc", "modified:desc", "severity:desc",
                                  "engagement:desc"])
async def test_floor_hides_older_publications_whatever_the_field_and_sort(loaded: ArticleStore, field: str,
                                                                          sort: str) -> None:
    floor = at(minutes=12)
    query = ArticleQuery(floor=floor, time_field=field, since=at(minutes=0), sort=sort, limit=1000,
                         include_archived=True)
    rows = await loaded.all_articles(query)
    assert {a.id for a in rows} == expected(lambda a: a.published_at >= floor and getattr(a, field) >= at(),
                                            archived=True)
    assert all(a.published_at >= floor for a in rows)
    paged = ArticleQuery(floor=floor, sort=sort, after=(getattr(rows[0], query.sort_field), rows[0].id), limit=1000,
                         include_archived=True)
    after = await loaded.all_articles(paged)
    assert after and all(a.published_at >= floor for a in after)  # a real next page, not an empty one
