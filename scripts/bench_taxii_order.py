"""scripts/bench taxii_order: a TAXII page of IOC records in date_added order at two data sizes.

An IOC object's date_added is its current version's: its modified, or its valid_until once it expired after
its last change (taxii.page_query). A page is read as two ordered index walks merged (modified, valid_until;
store.sqlite.queries.added_select), so a deep page should cost what it costs on a small collection.

Two SQLite files (default 10,000 and 100,000 records over 300 days, a mix of active, expired and revoked) are
seeded in-process; then --pages pages of 101 records from positions spread over the collection, as a TAXII
poll from a ``next`` token reads them, are timed in one process, the two files taking turns, beside the same
pages in the list's first_seen order (the IOC list's keyset, the baseline). Prints the medians and the ratio
lines (small / large) last.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import benchlib  # noqa: E402

from store.decay import instant  # noqa: E402
from store.ports import Stores  # noqa: E402
from store.query import IocFilters  # noqa: E402
from store.records import Ioc, utcnow  # noqa: E402
from store.sqlite import sqlite_stores  # noqa: E402

PAGE = 101
DAYS = 300


async def seeded(folder: Path, n: int) -> tuple[Stores, list[Ioc]]:
    """``n`` records spread over ``DAYS``, one in 50 revoked, in an open store."""
    rows = benchlib.synthetic_iocs(n, lambda i: DAYS * 24 * 60 * (n - i) / n)
    await benchlib.seed_iocs(folder, rows)
    stores = sqlite_stores(folder / "ctiwire.sqlite3")
    await stores.open()
    for row in rows[::50]:
        await stores.iocs.revoke_ioc(row.type, row.value, "bench", utcnow())
    held = [await stores.iocs.get_ioc(r.type, r.value) for r in rows[:: max(1, n // 200)]]
    return stores, [r for r in held if r is not None]


async def page_ms(stores: Stores, at: Ioc, added_order: bool) -> float:
    """One page after ``at``, in date_added order (a TAXII poll) or the list's order: milliseconds."""
    now = instant(utcnow())  # as a TAXII page reads (taxii.objects)
    position = (at.date_added(now) if added_order else at.first_seen, at.type, at.value)
    query = IocFilters().query(
        poll=added_order,
        now=now,
        floor=now - timedelta(days=365),
        limit=PAGE,
        added_after=now - timedelta(days=365) if added_order else None,
        added_order=added_order,
        after=position,
    )
    started = time.perf_counter()
    async for _ in stores.iocs.iter_iocs(query, PAGE):
        pass
    return (time.perf_counter() - started) * 1000


async def measure(args: argparse.Namespace) -> dict[tuple[int, bool], float]:
    with tempfile.TemporaryDirectory() as tmp:
        opened = {n: await seeded(Path(tmp) / str(n), n) for n in (args.small, args.large)}
        times: dict[tuple[int, bool], list[float]] = {(n, o): [] for n in opened for o in (True, False)}
        for k in range(args.pages):
            for n, (stores, positions) in opened.items():  # the two files take turns
                for order in (True, False):
                    times[(n, order)].append(await page_ms(stores, positions[k % len(positions)], order))
        for stores, _ in opened.values():
            await stores.close()
    return {key: statistics.median(values[args.pages // 5 :]) for key, values in times.items()}  # warm-up off


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=100)
    args = parser.parse_args()
    medians = asyncio.run(measure(args))
    for order, name in ((True, "date_added (TAXII)"), (False, "first_seen (list)")):
        print(
            f"page of {PAGE} in {name} order: {args.small:,} records {medians[(args.small, order)]:.2f} ms, "
            f"{args.large:,} records {medians[(args.large, order)]:.2f} ms (median)"
        )
    print(f"ratio taxii_added_page = {medians[(args.small, True)] / medians[(args.large, True)]:.2f} (target >= 0.8)")
    print(
        f"ratio list_first_seen_page = {medians[(args.small, False)] / medians[(args.large, False)]:.2f} (the baseline)"
    )


if __name__ == "__main__":
    main()
