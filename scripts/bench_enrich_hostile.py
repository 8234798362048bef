"""scripts/bench enrich_hostile: enrichment speed on long runs of one token shape, against ordinary articles.

A regular expression that reads the rest of a long token again from each of its letters turns one odd page
(a dotted run, a 100 kB word of capitals, a minified blob) into minutes of CPU inside a collection run. Each
shape below is timed on --size characters and compared with the tuning set's characters per CPU-second: a
shape read in linear time stays within a small factor of prose; a quadratic one falls far below it.
The last line is `ratio hostile_worst`, the slowest shape's speed over the tuning set's (target >= 0.2).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from ingest.enrich import enrich  # noqa: E402

# Units repeated into one line: dotted runs, capitals without spaces, digits and colons, defang debris.
SHAPES = ("word.", "Aa", "APT", "a.", "1.", "a:", "[.]", "a@", "a-", "Word. ", "hxxp://a[.]b[.c/", "http://a.com/ ")


def _speed(texts: list[tuple[str, str]]) -> float:
    """Characters per CPU-second of ``enrich`` over (title, text) pairs."""
    start = time.process_time()
    for title, text in texts:
        enrich(title, text)
    return sum(len(text) for _, text in texts) / max(time.process_time() - start, 1e-6)


def _tuning() -> list[tuple[str, str]]:
    texts = []
    for path in sorted((ROOT / "bench" / "enrich_eval" / "articles").glob("*.txt")):
        title, _, text = path.read_text(encoding="utf-8").partition("\n")
        texts.append((title, text))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="characters of each hostile text")
    args = parser.parse_args()
    enrich("warm-up", "The loader beaconed to its C2 server.")
    prose = _speed(_tuning())
    print("| text | kchars per CPU-second | against prose |\n|---|---|---|")
    print(f"| tuning set (.txt) | {prose / 1000:.0f} | 1.00 |")
    worst = float("inf")
    for unit in SHAPES:
        speed = _speed([("Hostile", unit * (args.size // len(unit)))])
        worst = min(worst, speed / prose)
        print(f"| `{unit!r}` x {args.size // len(unit)} | {speed / 1000:.0f} | {speed / prose:.2f} |")
    print(f"\ncommand: scripts/bench enrich_hostile --size {args.size}")
    print(f"ratio hostile_worst = {worst:.2f} (target >= 0.2)")


if __name__ == "__main__":
    main()
