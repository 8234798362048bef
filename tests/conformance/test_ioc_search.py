"""Substring search on IOC values (``IocQuery.value_contains``, store.value_search) on every backend: three
characters or more match anywhere, case-sensitively, through the trigram index; shorter needles match as a
prefix; exact value filters stay exact; results agree with a plain scan, in page order."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from conformance.factories import at, ioc

from store.ports import IocStore
from store.query import IocQuery
from store.sqlite import sqlite_stores

ALPHABET = "abcE.-/:1"


def corpus(seed: int) -> list[object]:
    rng = random.Random(seed)
    values = {"".join(rng.choice(ALPHABET) for _ in range(rng.randint(4, 14))) for _ in range(120)}
    return [ioc(v, ("domain", "url")[n % 2], first_seen=at(minutes=n % 17)) for n, v in enumerate(sorted(values))]


NEEDLES = ["abc", "c.E", "E.-", "/:1", "a-b/c", "zzz", "ab", "E", ".", "1:", "EEEE", "::"]


@pytest.mark.parametrize("needle", NEEDLES)
async def test_search_agrees_with_a_plain_scan(iocs: IocStore, needle: str) -> None:
    records = corpus(7)
    await iocs.upsert_iocs(records)  # type: ignore[arg-type]
    order = sorted(records, key=lambda i: (i.first_seen, i.type, i.value))  # type: ignore[attr-defined]
    match = (lambda v: v.startswith(needle)) if len(needle) < 3 else (lambda v: needle in v)
    want = [i for i in order if match(i.value)]  # type: ignore[attr-defined]
    assert await iocs.all_iocs(IocQuery(value_contains=needle, limit=1000)) == want
    assert await iocs.count_iocs(IocQuery(value_contains=needle)) == len(want)
    assert await iocs.estimate_iocs(IocQuery(value_contains=needle)) == (len(want), True)
    one_type = [i for i in want if i.type == "url"]  # type: ignore[attr-defined]
    assert await iocs.all_iocs(IocQuery(value_contains=needle, types=("url",), limit=1000)) == one_type


async def test_exact_values_stay_exact_and_search_follows_writes(iocs: IocStore) -> None:
    await iocs.upsert_iocs([ioc("evil.example"), ioc("evil.example.org"), ioc("notevil.example")])
    exact = await iocs.all_iocs(IocQuery(values=("evil.example",)))
    assert [i.value for i in exact] == ["evil.example"]
    assert len(await iocs.all_iocs(IocQuery(value_contains="evil.ex"))) == 3
    await iocs.upsert_iocs([ioc("evil.example", modified=at(minutes=5))])  # a merge keeps it findable, once
    assert len(await iocs.all_iocs(IocQuery(value_contains="evil.ex"))) == 3
    await iocs.replace_iocs([ioc("other.example")])
    assert await iocs.all_iocs(IocQuery(value_contains="evil")) == []
    assert [i.value for i in await iocs.all_iocs(IocQuery(value_contains="her.ex"))] == ["other.example"]


async def test_an_older_database_gets_its_value_index_at_open(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    stores = sqlite_stores(path)
    await stores.open()
    await stores.iocs.upsert_iocs([ioc("evil.example"), ioc("fine.example")])
    await stores.close()
    with sqlite3.connect(path) as db:  # as a release from before the index left it
        db.executescript("DROP TRIGGER iocs_values_ai; DROP TRIGGER iocs_values_ad; DROP TABLE iocs_values;")
    stores = sqlite_stores(path)
    await stores.open()
    try:
        assert [i.value for i in await stores.iocs.all_iocs(IocQuery(value_contains="il.ex"))] == ["evil.example"]
    finally:
        await stores.close()
