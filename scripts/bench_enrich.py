"""scripts/bench enrich: enrichment quality and speed on the labelled set in bench/enrich_eval/.

In one run, on the same texts (HTML articles are reduced to text once, and every tool reads that text):
  1. ctiwire's enricher (ingest.enrich): IOCs, CVEs, ATT&CK techniques, actors, category;
  2. ioc-finder and iocsearcher (the bench extra): IOCs and CVEs.
Prints a markdown table (precision/recall/F1 per IOC type and overall, CVE, technique and actor F1,
category accuracy, articles/s on one core) and the command; `--errors` lists every miss and false hit.
The labels were written with the articles and are never used by the unit tests (issue 7).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from ingest.enrich import CLI_IOC_TYPES, enrich  # noqa: E402
from ingest.enrich.textprep import html_to_text  # noqa: E402
from store.indicators import detect_type, normalize, refang  # noqa: E402

EVAL = ROOT / "bench" / "enrich_eval"
Pairs = set[tuple[str, str]]
IOC_FINDER_TYPES = {"ipv4s": "ipv4", "ipv6s": "ipv6", "domains": "domain", "urls": "url", "md5s": "md5",
                    "sha1s": "sha1", "sha256s": "sha256", "sha512s": "sha512", "email_addresses": "email"}
IOCSEARCHER_TYPES = {"ip4": "ipv4", "ip6": "ipv6", "fqdn": "domain", "url": "url", "md5": "md5", "sha1": "sha1",
                     "sha256": "sha256", "sha512": "sha512", "email": "email"}


def load_articles() -> list[tuple[str, str, str]]:
    """(stem, title, text) of every article, HTML reduced to text the way ``ctiwire enrich`` does."""
    articles = []
    for path in sorted((EVAL / "articles").iterdir()):
        content = path.read_text(encoding="utf-8")
        if path.suffix in (".html", ".htm"):
            title, text = html_to_text(content)
        else:
            title, _, text = content.partition("\n")
        articles.append((path.stem, title.strip(), text))
    return articles


def clean_pairs(pairs: Iterable[tuple[str, str]]) -> Pairs:
    """(type, value) pairs spelled as the IOC records spell them (what every tool is scored on)."""
    cleaned = set()
    for ioc_type, value in pairs:
        value = refang(value.strip())
        # A value that is not of its claimed type (a scheme-less "URL") stays as written: a false hit.
        cleaned.add((ioc_type, normalize(ioc_type, value) if detect_type(value) == ioc_type else value))
    return cleaned


def truth(label: dict[str, object]) -> dict[str, object]:
    iocs = label.get("iocs") or {}
    assert isinstance(iocs, dict)
    return {
        "iocs": clean_pairs((kind, value) for kind, values in iocs.items() for value in values),
        "cves": {normalize("cve", cve) for cve in label.get("cves") or []},  # type: ignore[attr-defined]
        "techniques": set(label.get("techniques") or []),  # type: ignore[call-overload]
        "actors": set(label.get("actors") or []),  # type: ignore[call-overload]
        "category": label["category"],
    }


def run_ctiwire(title: str, text: str) -> dict[str, object]:
    result = enrich(title, text).to_cli()
    iocs = result["iocs"]
    return {"iocs": {(kind, value) for kind in CLI_IOC_TYPES for value in iocs[kind]}, "cves": set(result["cves"]),
            "techniques": set(result["attack_techniques"]), "actors": set(result["threat_actors"]),
            "category": result["category"]}


def run_ioc_finder(title: str, text: str) -> dict[str, object]:
    from ioc_finder import find_iocs

    found = find_iocs(f"{title}\n{text}")
    pairs = [(ours, value) for theirs, ours in IOC_FINDER_TYPES.items() for value in found.get(theirs, [])]
    return {"iocs": clean_pairs(pairs), "cves": {normalize("cve", cve) for cve in found.get("cves", [])}}


_SEARCHER: list[object] = []


def run_iocsearcher(title: str, text: str) -> dict[str, object]:
    if not _SEARCHER:
        from iocsearcher.searcher import Searcher

        _SEARCHER.append(Searcher())
    found = _SEARCHER[0].search_data(f"{title}\n{text}")  # type: ignore[attr-defined]
    pairs = [(IOCSEARCHER_TYPES[ioc.name], ioc.value) for ioc in found if ioc.name in IOCSEARCHER_TYPES]
    cves = {normalize("cve", ioc.value) for ioc in found if ioc.name == "cve"}
    return {"iocs": clean_pairs(pairs), "cves": cves}


class Score:
    """True positives, false positives and false negatives, with the misses kept for --errors."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.errors: list[str] = []

    def add(self, stem: str, expected: set[object], got: set[object]) -> None:
        self.counts["tp"] += len(expected & got)
        self.counts["fp"] += len(got - expected)
        self.counts["fn"] += len(expected - got)
        self.errors += [f"{stem}: false {value}" for value in sorted(map(str, got - expected))]
        self.errors += [f"{stem}: missed {value}" for value in sorted(map(str, expected - got))]

    def prf(self) -> tuple[float, float, float]:
        tp, fp, fn = self.counts["tp"], self.counts["fp"], self.counts["fn"]
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1


def evaluate(tool: Callable[[str, str], dict[str, object]], articles: list[tuple[str, str, str]],
             labels: dict[str, dict[str, object]], repeat: int) -> tuple[dict[str, Score], float, dict[str, object]]:
    scores: dict[str, Score] = {}
    outputs = {stem: tool(title, text) for stem, title, text in articles}  # also warms caches
    started = time.perf_counter()
    for _ in range(repeat):
        for _stem, title, text in articles:
            tool(title, text)
    rate = repeat * len(articles) / (time.perf_counter() - started)
    category = Score()
    for stem, output in outputs.items():
        expected = truth(labels[stem])
        for kind in CLI_IOC_TYPES:
            scores.setdefault(kind, Score()).add(
                stem, {p for p in expected["iocs"] if p[0] == kind},  # type: ignore[attr-defined]
                {p for p in output["iocs"] if p[0] == kind})  # type: ignore[attr-defined]
        scores.setdefault("all IOCs", Score()).add(stem, expected["iocs"], output["iocs"])  # type: ignore[arg-type]
        for field in ("cves", "techniques", "actors"):
            if field in output:
                scores.setdefault(field, Score()).add(stem, expected[field], output[field])  # type: ignore[arg-type]
        if "category" in output:
            category.add(stem, {expected["category"]}, {output["category"]})
    return scores, rate, {"category": category}


def cell(score: Score | None) -> str:
    if score is None or not sum(score.counts.values()):
        return "-"  # nothing labelled and nothing found
    precision, recall, f1 = score.prf()
    return f"{precision:.2f} / {recall:.2f} / {f1:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="passes over the set when timing ctiwire")
    parser.add_argument("--errors", action="store_true", help="list every false hit and miss of ctiwire")
    parser.add_argument("--subset", default="", help="only the articles whose name starts with this prefix")
    args = parser.parse_args()
    labels = yaml.safe_load((EVAL / "labels.yaml").read_text(encoding="utf-8"))
    labels = {stem: label for stem, label in labels.items() if stem.startswith(args.subset)}
    articles = [article for article in load_articles() if article[0].startswith(args.subset)]
    missing = {stem for stem, _, _ in articles} ^ set(labels)
    if missing:
        raise SystemExit(f"articles and labels differ: {sorted(missing)}")
    tools = {"ctiwire": (run_ctiwire, args.repeat), "ioc-finder": (run_ioc_finder, 1),
             "iocsearcher": (run_iocsearcher, 1)}
    results = {name: evaluate(tool, articles, labels, repeat) for name, (tool, repeat) in tools.items()}
    print(f"Enrichment on {len(articles)} labelled articles (P / R / F1)\n")
    print("| metric | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for row in (*CLI_IOC_TYPES, "all IOCs", "cves", "techniques", "actors"):
        print(f"| {row} | " + " | ".join(cell(scores.get(row)) for scores, _, _ in results.values()) + " |")
    accuracy = [f"{extra['category'].prf()[0]:.2f}" if extra["category"].counts else "-"  # type: ignore[attr-defined]
                for _, _, extra in results.values()]
    print("| category accuracy | " + " | ".join(accuracy) + " |")
    print("| articles/s (one core) | " + " | ".join(f"{rate:.0f}" for _, rate, _ in results.values()) + " |")
    print(f"\ncommand: scripts/bench enrich {shlex.join(sys.argv[1:])}".rstrip())
    if args.errors:
        scores = results["ctiwire"][0]
        for row in ("all IOCs", "cves", "techniques", "actors"):
            print(f"\n## {row}\n" + "\n".join(scores[row].errors))
        print("\n## category\n" + "\n".join(results["ctiwire"][2]["category"].errors))  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
