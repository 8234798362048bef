"""scripts/bench exports: seconds and peak memory to build each export format for N synthetic IOCs.

Beside the formats, the in-run ceiling: orjson-encoding the same records' API form (``Ioc.to_api()``)
with no formatting at all; and, for scale, orjson alone on those dicts built beforehand (``to_api``
makes a UUIDv5 and three timestamps per record, which is most of the ceiling's time).

Each build is timed on its own (best of ``--repeat`` runs, ``time.perf_counter``). Peak memory is
measured in a separate run under ``tracemalloc`` (which slows code down, so it never overlaps the
timing). Every format is also measured consuming its chunks without keeping them, which is how the
server writes them: that peak shows whether memory stays flat as the export grows.
Prints a markdown table and the command that produced it (target < 1 s per format).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from exporters.base import ArticleRef, ExportContext, Exporter  # noqa: E402
from exporters.registry import EXPORTERS  # noqa: E402
from store.records import Ioc  # noqa: E402

KINDS = ("ipv4", "domain", "url", "sha256", "md5", "ipv6", "sha1", "email", "cve")
TECHNIQUES = ("T1566.001", "T1071.001", "T1190", "T1059.001", "T1105")


def synthetic(n: int, now: datetime) -> tuple[list[Ioc], ExportContext]:
    """``n`` records of every type, with articles, CVEs and techniques, like a year of ingestion."""
    rows = []
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        value = {"ipv4": f"45.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}", "domain": f"c2-{i}.bad-host.net",
                 "url": f"http://c2-{i}.bad-host.net/gate.php?id={i}", "sha256": f"{i:064x}", "md5": f"{i:032x}",
                 "ipv6": f"2001:db8::{i:x}", "sha1": f"{i:040x}", "email": f"billing{i}@invoice-{i % 97}.example",
                 "cve": f"CVE-2025-{10000 + i}"}[kind]
        seen = now - timedelta(minutes=i % 50_000)
        rows.append(Ioc(kind, value, ("high", "medium", "low")[i % 3], f"Feed {i % 30}",
                        ("government", "commercial", "community")[i % 3], seen, seen, seen,
                        sources=[f"Feed {i % 30}", f"Feed {(i + 7) % 30}"], article_ids=[f"a{i % 500}"],
                        cves=[f"CVE-2025-{i % 200}"] if i % 5 == 0 else [],
                        techniques=[TECHNIQUES[i % 5]] if i % 4 == 0 else []))
    articles = {f"a{k}": ArticleRef(f"Article {k}", f"https://news.example/{k}", f"Feed {k % 30}") for k in range(500)}
    return rows, ExportContext(now, now - timedelta(days=365), now, "pro", articles)


def timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_mib(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def drain(chunks: Iterable[bytes]) -> int:
    """Consume a stream the way the server does: write each chunk and let it go."""
    return sum(len(c) for c in chunks)


def measure(rows: list[Ioc], ctx: ExportContext, repeat: int) -> list[tuple[str, float, float, float, int]]:
    """(name, seconds, peak MiB whole document, peak MiB streamed, bytes) per format, ceiling first."""
    def ceiling() -> bytes:
        return orjson.dumps([r.to_api() for r in rows])

    prebuilt = [r.to_api() for r in rows]

    def encode_only() -> bytes:
        return orjson.dumps(prebuilt)

    results = [("ceiling: orjson of to_api()", timed(ceiling, repeat), peak_mib(ceiling), float("nan"),
                len(ceiling())),
               ("(orjson alone, dicts prebuilt)", timed(encode_only, repeat), peak_mib(encode_only), float("nan"),
                len(encode_only()))]
    for fmt, cls in EXPORTERS.items():
        whole, streamed = _builds(cls(), rows, ctx)
        results.append((fmt, timed(whole, repeat), peak_mib(whole), peak_mib(streamed), len(whole())))
    return results


def _builds(exporter: Exporter, rows: list[Ioc], ctx: ExportContext) -> tuple[Callable[[], bytes], Callable[[], int]]:
    """The whole document joined (what the cache stores), and the stream consumed chunk by chunk."""
    def whole() -> bytes:
        return b"".join(exporter.encode(rows, ctx))

    def streamed() -> int:
        return drain(exporter.encode(rows, ctx))

    return whole, streamed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iocs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per format (best is kept)")
    args = parser.parse_args()
    rows, ctx = synthetic(args.iocs, datetime(2026, 11, 23, 13, 0, tzinfo=UTC))
    results = measure(rows, ctx, args.repeat)
    print(f"\n`scripts/bench exports --iocs {args.iocs} --repeat {args.repeat}` ({os.cpu_count()} cores, "
          f"Python {sys.version.split()[0]})\n")
    print("| format | seconds | x ceiling | peak MiB (whole) | peak MiB (streamed) | output MB |")
    print("|---|---:|---:|---:|---:|---:|")
    base = results[0][1]
    for name, seconds, whole, streamed, size in results:
        stream = "-" if streamed != streamed else f"{streamed:.1f}"  # NaN: the ceiling has no stream
        print(f"| {name} | {seconds:.3f} | {seconds / base:.1f} | {whole:.1f} | {stream} | {size / 1e6:.1f} |")
    slow = [name for name, seconds, *_ in results[2:] if seconds >= 1.0]
    verdict = "met" if not slow else "missed by " + ", ".join(slow)
    print(f"\ntarget: every format < 1 s for {args.iocs:,} IOCs: {verdict}")


if __name__ == "__main__":
    main()
