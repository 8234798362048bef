"""scripts/bench warninglists: the MISP warninglists matcher (store.warninglists) on its own.

Measures, in one process: building the index from the lists ``pymispwarninglists`` ships (seconds, and the
process's peak memory), then matching 1,000 mixed values (addresses, domains, URLs, hashes, e-mail
addresses; a share of them listed) the way an ingestion batch or a bulk lookup of 1,000 values does
(values/s, median of repeats), against the package's own matcher (``WarningLists(slow_search=True).search``,
which matches each list by its type by scanning it) on the first ``--baseline`` of the same values.
Prints a markdown table and the ratio as the last line.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time

from store.warninglists import warninglists


def mixed_values(n: int, seed: int = 7) -> list[tuple[str, str]]:
    """``n`` values, about one in five on a list (resolvers, top sites, empty-file hashes)."""
    rng = random.Random(seed)
    listed = [
        ("ipv4", "8.8.8.8"),
        ("domain", "login.microsoftonline.com"),
        ("url", "https://www.google.com/"),
        ("md5", "d41d8cd98f00b204e9800998ecf8427e"),
        ("email", "abuse@corp.example"),
    ]
    out: list[tuple[str, str]] = []
    for i in range(n):
        kind = i % 5
        if rng.random() < 0.2:
            out.append(listed[kind])
        elif kind == 0:
            out.append(("ipv4", ".".join(str(rng.randrange(1, 255)) for _ in range(4))))
        elif kind == 1:
            out.append(("domain", f"c2-{i}.evil-{rng.randrange(10**6)}.top"))
        elif kind == 2:
            out.append(("url", f"https://cdn-{i}.example-{rng.randrange(10**6)}.net/a/{i}.php"))
        elif kind == 3:
            out.append(("sha256", f"{rng.getrandbits(256):064x}"))
        else:
            out.append(("email", f"user{i}@mail-{rng.randrange(10**6)}.biz"))
    return out


def rate(fn: object, values: list[tuple[str, str]], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for ioc_type, value in values:
            fn(ioc_type, value)  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return len(values) / statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--values", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline", type=int, default=20, help="values the package's own matcher is timed on")
    args = parser.parse_args()
    start = time.perf_counter()
    lists = warninglists()
    built = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    values = mixed_values(args.values)
    matched = rate(lists.names, values, args.repeats)
    from pymispwarninglists import WarningLists

    package = WarningLists(slow_search=True)
    floor = rate(lambda _t, v: package.search(v), values[: args.baseline], 1)
    listed = sum(bool(lists.names(t, v)) for t, v in values)
    print("| measure | value |\n|---|---:|")
    print(f"| index build from {len(lists.lists)} lists, s | {built:.2f} |")
    print(f"| process peak memory after the build, MB | {peak_mb:,.0f} |")
    print(f"| {args.values:,} mixed values matched ({listed} listed), values/s (median) | {matched:,.0f} |")
    print(f"| the same {args.values:,} values, ms | {1000 * args.values / matched:.1f} |")
    print(
        f"| pymispwarninglists' own search (slow_search=True), first {args.baseline} values, values/s | {floor:,.1f} |"
    )
    print(
        f"\nPYTHONPATH=. python scripts/bench_warninglists.py --values {args.values} --repeats {args.repeats} "
        f"--baseline {args.baseline}"
    )
    print(f"ratio warninglist_match = {matched / floor:,.0f} (values/s over the package's own search's)")


if __name__ == "__main__":
    main()
