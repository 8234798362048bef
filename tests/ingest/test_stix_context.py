"""Articles -> the STIX context facts: one report per article with indicators, relationships in the
directions STIX 2.1 names them, and a bounded report however many indicators an article lists."""

from __future__ import annotations

from datetime import UTC, datetime

from ingest.stix_context import MENTIONS_PER_ARTICLE, article_facts, context_facts
from store.records import Article, ArticleIoc, MitreTechnique
from store.stix_context import actor_id
from store.stixids import object_id

NOW = datetime(2026, 11, 1, tzinfo=UTC)


def news(mentions: list[ArticleIoc], actors: list[str], n: int = 1, **fields: object) -> Article:
    return Article(
        f"a{n}",
        "Title",
        "https://news.example/a",
        "https://news.example/a",
        "s",
        NOW,
        NOW,
        NOW,
        NOW,
        "Feed",
        threat_actors=actors,
        iocs=mentions,
        **fields,
    )  # type: ignore[arg-type]


def test_an_article_without_indicators_brings_nothing() -> None:
    assert article_facts(news([], ["lockbit"])) == []


def test_relationships_run_in_the_directions_stix_names() -> None:
    technique = MitreTechnique("T1059", "Command and Scripting Interpreter")
    facts = article_facts(
        news(
            [ArticleIoc("ipv4", "192.0.2.1"), ArticleIoc("cve", "CVE-2024-1")], ["APT28"], mitre_techniques=[technique]
        )
    )
    actor = actor_id("apt28")
    links = {(f.facts["source"], f.facts["kind"], f.facts["target"]) for f in facts if f.type == "relationship"}
    assert {
        (object_id("ipv4", "192.0.2.1"), "indicates", actor),
        (actor, "targets", object_id("cve", "CVE-2024-1")),
        (actor, "uses", object_id("mitre-attack", "T1059")),
    } <= links
    report = next(f for f in facts if f.type == "report")
    assert actor in report.facts["refs"] and len(report.facts["refs"]) == 4


def test_a_report_names_a_bounded_number_of_indicators() -> None:
    many = [ArticleIoc("domain", f"d{n}.bad.example") for n in range(MENTIONS_PER_ARTICLE + 50)]
    facts = context_facts([news(many, ["fin7"])])
    report = next(f for f in facts if f.type == "report")
    assert len(report.facts["refs"]) == MENTIONS_PER_ARTICLE + 1
    assert sum(f.type == "relationship" and f.facts["kind"] == "indicates" for f in facts) == MENTIONS_PER_ARTICLE
