"""The decaying score (store.decay): halved every half-life of the type since the last report, expired
from valid_until on, the same number whether read from a record or completed onto its stored form, and the
min_score bound selecting exactly the records that score that much."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest

from store import decay
from store.query import IocQuery
from store.records import Ioc, iso
from store.sqlite import sqlite_stores
from store.sqlite.scores import stored_form

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


@pytest.mark.parametrize("at", [NOW, NOW + timedelta(milliseconds=417)])  # a list's second, a poll's millisecond
async def test_sqlite_pages_complete_stored_forms_as_the_record_reads(tmp_path: Path, at: datetime) -> None:
    """The scores SQLite computes on its ladder (store.sqlite.scores) are the record's, on both sides of
    every bound: each class's records a few milliseconds before, at and after each score's bound."""
    records = [
        _ioc(t, v.format(n), days=d)
        for n, d in enumerate((0, 3.3, 9.99, 12, 40, 400))
        for t, v in (
            ("ipv4", "45.1.2.{}"),
            ("md5", "b{}" + "b" * 30),
            ("domain", "x{}.bad-host.net"),
            ("cve", "CVE-2024-100{}"),
        )
    ]
    records.append(dataclasses.replace(records[0], value="45.1.3.1", revoked=True))
    records += [record for _, _, record in _around_bounds()]
    stores = sqlite_stores(tmp_path / "decay.sqlite3")
    await stores.open()
    try:
        await stores.iocs.upsert_iocs(records)
        query = IocQuery(limit=len(records), statuses=decay.STATUSES, include_warninglisted=True, now=at)
        pages = [orjson.loads(row) async for batch in stores.iocs.iter_ioc_rows(query) for row in batch]
    finally:
        await stores.close()
    assert len(pages) == len({(r.type, r.value) for r in records})
    expected = {(r.type, r.value): r.to_api(at) for r in records}
    wrong = [(p, expected[p["type"], p["value"]]) for p in pages if p != expected[p["type"], p["value"]]]
    assert not wrong, [(a["value"], {k: (a[k], b[k]) for k in a if a[k] != b.get(k)}) for a, b in wrong]
    # an expiry is a change at valid_until: the expired records' modified moved to it
    assert [p["modified"] == p["valid_until"] for p in pages] == [p["status"] == "expired" for p in pages]
    assert {p["status"] for p in pages} == set(decay.STATUSES)


async def test_an_expired_record_changed_after_its_expiry_keeps_its_own_modified(tmp_path: Path) -> None:
    """The SQL rewrites an expired row's ``modified`` (the stored form's last, fixed-width date) only when its
    valid_until is later; a record changed after it expired (a false positive, a sighting) keeps its own."""
    changed = dataclasses.replace(_ioc(days=40, value="45.1.3.2"), modified=NOW - timedelta(days=1))
    lapsed = _ioc(days=40, value="45.1.3.3")
    assert stored_form(changed).endswith(f',"modified":"{iso(changed.modified)}"'.encode())
    stores = sqlite_stores(tmp_path / "expired.sqlite3")
    await stores.open()
    try:
        await stores.iocs.upsert_iocs([changed, lapsed])
        query = IocQuery(limit=10, statuses=("expired",), include_warninglisted=True, now=NOW)
        pages = {p["value"]: p for batch in [b async for b in stores.iocs.iter_ioc_rows(query)]
                 for p in map(orjson.loads, batch)}
    finally:
        await stores.close()
    assert pages == {r.value: r.to_api(NOW) for r in (changed, lapsed)}
    assert pages["45.1.3.2"]["modified"] == iso(changed.modified) != pages["45.1.3.2"]["valid_until"]
    assert pages["45.1.3.3"]["modified"] == pages["45.1.3.3"]["valid_until"]


def _around_bounds(shifts: tuple[int, ...] = (-3, -2, -1, 0, 1, 2, 3)) -> list[tuple[int, datetime, Ioc]]:
    """(score, the bound at which it starts, record) for records of each decay class whose valid_until lies
    about ``shift`` ms from that bound (stored times are whole milliseconds: within one of it)."""
    model, out = decay.model(), []
    for ioc_type in ("ipv4", "domain", "sha256", "cve"):
        life = timedelta(days=model.half_life(ioc_type) * math.log2(80 / model.threshold))  # base 80
        for score in (1, 24, 25, 26, 50, 99, 100):
            bound = NOW + timedelta(days=model.half_life(ioc_type) * math.log2((score - 0.5) / model.threshold))
            for shift in shifts:
                seen = bound + timedelta(milliseconds=shift) - life
                value = {
                    "ipv4": f"45.9.{score}.{shift + 10}",
                    "domain": f"b{score}x{shift + 10}.bad-host.net",
                    "sha256": f"{score:032x}{shift + 10:032x}",
                    "cve": f"CVE-2020-{score * 100 + shift + 10}",
                }
                record = Ioc(
                    ioc_type, value[ioc_type], "high", "Feed", "government", seen, seen, seen, sources=["Feed"]
                )
                out.append((score, bound, record))
    return out


def test_a_ladder_moved_to_an_instant_is_the_one_built_there() -> None:
    """``scores_at`` moves the model's ladder (its steps built once) to each instant a poll reads at."""
    for at in (NOW, NOW + timedelta(milliseconds=417), NOW + timedelta(days=3, milliseconds=1)):
        built, moved = decay.Scores(at, decay.model()), decay.scores_at(at)
        assert (moved.now, moved.today, moved.cuts) == (built.now, built.today, built.cuts)
        assert (moved.leaves, moved.marks) == (built.leaves, built.marks)


def test_a_score_starts_at_its_bound_to_the_millisecond() -> None:
    sides = set()
    for score, bound, record in _around_bounds():
        above = record.valid_until >= bound
        assert decay.score(record, NOW) == (score if above else score - 1), (record.type, score, record.valid_until)
        sides.add((record.type, score, above))
    assert len(sides) == 4 * 7 * 2  # every bound was met from both sides


def test_min_score_bounds_select_exactly_the_records_scoring_that_much() -> None:
    records = [_ioc("domain", "x.bad-host.net", days=d / 4) for d in range(400)]
    for minimum in (1, 10, 25, 50, 79):
        bound = iso(decay.until_score("domain", minimum, NOW))
        assert all((iso(r.valid_until) >= bound) == (decay.score(r, NOW) >= minimum) for r in records)
