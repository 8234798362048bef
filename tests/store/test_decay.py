"""The decaying score (store.decay): halved every half-life of the type since the last report, expired
from valid_until on, the same number whether read from a record or completed onto its stored form, and the
min_score bound selecting exactly the records that score that much."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from store import decay
from store.records import Ioc, iso

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def _ioc(ioc_type: str = "ipv4", value: str = "45.1.2.3", days: float = 0, **fields: object) -> Ioc:
    seen = NOW - timedelta(days=days)
    return Ioc(ioc_type, value, "high", "Feed", "government", seen, seen, seen, sources=["Feed"], **fields)


def test_the_score_halves_every_half_life_and_expires_at_valid_until() -> None:
    fresh, week, month = (_ioc(days=d) for d in (0, 10, 40))
    assert decay.score(fresh, NOW) == 80  # high confidence from a government source
    assert decay.score(week, NOW) == 40  # one half-life of an address later
    assert decay.status(fresh, NOW) == "active" and decay.status(month, NOW) == "expired"
    assert decay.status(fresh, fresh.valid_until) == "expired"  # at valid_until: expired
    assert decay.score(fresh, fresh.valid_until) == round(decay.model().threshold)


@pytest.mark.parametrize(
    "ioc_type, value",
    [("ipv4", "45.1.2.3"), ("domain", "c2.bad-host.net"), ("sha256", "a" * 64), ("cve", "CVE-2024-3400")],
)
def test_half_lives_grow_from_addresses_to_files(ioc_type: str, value: str) -> None:
    days = {"ipv4": 10, "domain": 30, "sha256": 180, "cve": 365}[ioc_type]
    assert decay.score(_ioc(ioc_type, value, days=days), NOW) == 40


def test_corroboration_and_sightings_raise_the_score_and_move_valid_until() -> None:
    one = _ioc(days=5)
    more = dataclasses.replace(one, sources=["A", "B", "C", "D"], sightings=7)
    assert decay.score(more, NOW) > decay.score(one, NOW) and more.valid_until > one.valid_until
    revoked = dataclasses.replace(more, revoked=True)
    assert decay.score(revoked, NOW) == 0 and decay.status(revoked, NOW) == "revoked"


def test_completed_stored_forms_agree_with_the_record() -> None:
    records = [
        _ioc(t, v, days=d)
        for d in (0, 3.3, 9.99, 12, 40, 400)
        for t, v in (("ipv4", "45.1.2.3"), ("md5", "b" * 32), ("domain", "x.bad-host.net"))
    ]
    records.append(dataclasses.replace(records[0], revoked=True))
    scores = decay.Scores(NOW, decay.model())
    rows = [(orjson.dumps(r.stored_api()), r.type, iso(r.valid_until), r.revoked, iso(r.modified)) for r in records]
    completed = [orjson.loads(b) for b in scores.complete(rows)]
    assert completed == [r.to_api(NOW) for r in records]
    # an expiry is a change at valid_until: the expired records' modified moved to it
    assert [c["modified"] == c["valid_until"] for c in completed] == [c["status"] == "expired" for c in completed]


def test_min_score_bounds_select_exactly_the_records_scoring_that_much() -> None:
    records = [_ioc("domain", "x.bad-host.net", days=d / 4) for d in range(400)]
    for minimum in (1, 10, 25, 50, 79):
        bound = iso(decay.until_score("domain", minimum, NOW))
        assert all((iso(r.valid_until) >= bound) == (decay.score(r, NOW) >= minimum) for r in records)
