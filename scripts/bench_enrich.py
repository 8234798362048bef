"""scripts/bench enrich: enrichment quality and speed on the tuning and the held-out labelled sets.

bench/enrich_eval/ is the tuning set (rules are fixed against it: its figures measure memory);
bench/enrich_heldout/ is the sealed held-out set, written and labelled from bench/LABELLING.md alone by
writers who had not read the rules, before the extractor ran on it: its figures are the product's.
In one run, on the same texts (HTML articles are reduced to text once, and every tool reads that text):
  1. ctiwire's enricher (ingest.enrich): IOCs, CVEs, ATT&CK techniques, actors, category, severity;
  2. ioc-finder and iocsearcher (the bench extra): IOCs and CVEs.
Prints one markdown table with both sets side by side (precision/recall/F1 per IOC type and overall, CVE,
technique and actor F1, category and severity accuracy, articles/s on one core), the command, and the
held-out figures against the issue's targets as the last lines. `--errors` lists every miss and false
hit on the tuning and calibration (lists) sets only: a held-out error is never a reason to change a rule.
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

# bench/enrich_lists/ is a calibration set: indicator lists in shapes without an "Indicators" heading,
# written and labelled from bench/LABELLING.md alone. Rules may be read against it (its errors are listed).
SETS = {
    "tuning": ROOT / "bench" / "enrich_eval",
    "held-out": ROOT / "bench" / "enrich_heldout",
    "lists": ROOT / "bench" / "enrich_lists",
}
# The sets whose misses and false hits --errors lists: never the held-out set.
OPEN_SETS = ("tuning", "lists")
# The product's targets on the held-out set: (row, column of P/R/F1 or accuracy, minimum).
TARGETS = (
    ("all IOCs", 0, "ioc_precision", 0.98),
    ("all IOCs", 1, "ioc_recall", 0.95),
    ("ipv6", 1, "ipv6_recall", 0.95),
    ("email", 1, "email_recall", 0.95),
    ("cves", 2, "cve_f1", 0.99),
    ("techniques", 2, "technique_f1", 0.90),
    ("actors", 2, "actor_f1", 0.90),
    ("category", 0, "category_accuracy", 0.85),
    ("severity", 0, "severity_accuracy", 0.75),
)
Pairs = set[tuple[str, str]]
IOC_FINDER_TYPES = {
    "ipv4s": "ipv4",
    "ipv6s": "ipv6",
    "domains": "domain",
    "urls": "url",
    "md5s": "md5",
    "sha1s": "sha1",
    "sha256s": "sha256",
    "sha512s": "sha512",
    "email_addresses": "email",
}
IOCSEARCHER_TYPES = {
    "ip4": "ipv4",
    "ip6": "ipv6",
    "fqdn": "domain",
    "url": "url",
    "md5": "md5",
    "sha1": "sha1",
    "sha256": "sha256",
    "sha512": "sha512",
    "email": "email",
}


def load_labels(folder: Path) -> dict[str, dict[str, object]]:
    """Every label of a set: ``labels.yaml`` or ``labels-*.yaml`` (a name may appear only once)."""
    labels: dict[str, dict[str, object]] = {}
    for path in sorted(folder.glob("labels*.yaml")):
        for stem, label in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            if stem in labels:
                raise SystemExit(f"{path}: {stem} is labelled twice")
            labels[stem] = label
    return labels


def load_articles(folder: Path) -> list[tuple[str, str, str]]:
    """(stem, title, text) of every article, HTML reduced to text the way ``ctiwire enrich`` does."""
    articles = []
    for path in sorted((folder / "articles").iterdir()):
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
        "severity": label.get("severity"),
    }


def run_ctiwire(title: str, text: str) -> dict[str, object]:
    result = enrich(title, text).to_cli()
    iocs = result["iocs"]
    return {
        "iocs": {(kind, value) for kind in CLI_IOC_TYPES for value in iocs[kind]},
        "cves": set(result["cves"]),
        "techniques": set(result["attack_techniques"]),
        "actors": set(result["threat_actors"]),
        "category": result["category"],
        "severity": result["severity_label"],
    }


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


def evaluate(
    tool: Callable[[str, str], dict[str, object]],
    articles: list[tuple[str, str, str]],
    labels: dict[str, dict[str, object]],
    repeat: int,
) -> tuple[dict[str, Score], float, dict[str, object]]:
    scores: dict[str, Score] = {}
    outputs = {stem: tool(title, text) for stem, title, text in articles}  # also warms caches
    started = time.perf_counter()
    for _ in range(repeat):
        for _stem, title, text in articles:
            tool(title, text)
    rate = repeat * len(articles) / (time.perf_counter() - started)
    category, severity = Score(), Score()
    for stem, output in outputs.items():
        expected = truth(labels[stem])
        for kind in CLI_IOC_TYPES:
            scores.setdefault(kind, Score()).add(
                stem,
                {p for p in expected["iocs"] if p[0] == kind},  # type: ignore[attr-defined]
                {p for p in output["iocs"] if p[0] == kind},  # type: ignore[attr-defined]
            )
        scores.setdefault("all IOCs", Score()).add(stem, expected["iocs"], output["iocs"])  # type: ignore[arg-type]
        for field in ("cves", "techniques", "actors"):
            if field in output:
                scores.setdefault(field, Score()).add(stem, expected[field], output[field])  # type: ignore[arg-type]
        if "category" in output:
            category.add(stem, {expected["category"]}, {output["category"]})
        if "severity" in output and expected["severity"]:
            severity.add(stem, {expected["severity"]}, {output["severity"]})
    return scores, rate, {"category": category, "severity": severity}


def cell(score: Score | None) -> str:
    if score is None or not sum(score.counts.values()):
        return "-"  # nothing labelled and nothing found
    precision, recall, f1 = score.prf()
    return f"{precision:.2f} / {recall:.2f} / {f1:.2f}"


Result = tuple[dict[str, Score], float, dict[str, Score]]


def run_set(folder: Path, subset: str, repeat: int, *, baselines: bool = True) -> tuple[int, dict[str, Result]] | None:
    """(articles, tool -> result) of one labelled set, or None when the set is not there."""
    if not (folder / "articles").is_dir():
        return None
    labels = {stem: label for stem, label in load_labels(folder).items() if stem.startswith(subset)}
    articles = [article for article in load_articles(folder) if article[0].startswith(subset)]
    missing = {stem for stem, _, _ in articles} ^ set(labels)
    if missing:
        raise SystemExit(f"{folder}: articles and labels differ: {sorted(missing)}")
    tools = {"ctiwire": (run_ctiwire, repeat), "ioc-finder": (run_ioc_finder, 1), "iocsearcher": (run_iocsearcher, 1)}
    if not baselines:
        tools = {"ctiwire": tools["ctiwire"]}
    return len(articles), {name: evaluate(tool, articles, labels, times) for name, (tool, times) in tools.items()}


def accuracy(extra: dict[str, Score], field: str) -> str:
    return f"{extra[field].prf()[0]:.2f}" if extra[field].counts else "-"


def print_table(sets: dict[str, tuple[int, dict[str, Result]]]) -> None:
    columns = [(name, tool, result) for name, (_, results) in sets.items() for tool, result in results.items()]
    print(
        "Enrichment, P / R / F1 (" + ", ".join(f"{name}: {count} articles" for name, (count, _) in sets.items()) + ")\n"
    )
    print("| metric | " + " | ".join(f"{tool} ({name})" for name, tool, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for row in (*CLI_IOC_TYPES, "all IOCs", "cves", "techniques", "actors"):
        print(f"| {row} | " + " | ".join(cell(result[0].get(row)) for _, _, result in columns) + " |")
    for field in ("category", "severity"):
        print(f"| {field} accuracy | " + " | ".join(accuracy(result[2], field) for _, _, result in columns) + " |")
    print("| articles/s (one core) | " + " | ".join(f"{result[1]:.0f}" for _, _, result in columns) + " |")


def print_errors(name: str, result: Result) -> None:
    """Every miss and false hit of one open set (tuning or calibration), by field."""
    scores, _, extra = result
    for row in ("all IOCs", "cves", "techniques", "actors"):
        print(f"\n## {name}: {row}\n" + "\n".join(scores[row].errors))
    for field in ("category", "severity"):
        print(f"\n## {name}: {field}\n" + "\n".join(extra[field].errors))


def print_targets(result: Result) -> None:
    """The held-out figures against the product's targets, one line each (the last lines of the output)."""
    scores, _, extra = result
    for row, column, name, target in TARGETS:
        score = extra.get(row) or scores.get(row)
        value = score.prf()[column] if score is not None and score.counts else float("nan")
        print(f"quality {name} = {value:.4f} (target >= {target})")  # 0.8496 is not 0.85


def second_labels(folder: Path, kind: str, subset: str) -> dict[str, object]:
    """A second analyst's labels of one kind (``second-analyst/<kind>-*.yaml``), keyed by article name."""
    return {
        stem: value
        for path in sorted((folder / "second-analyst").glob(f"{kind}-*.yaml"))
        for stem, value in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items()
        if stem.startswith(subset)
    }


def agreement(folder: Path, subset: str) -> tuple[int, Score] | None:
    """A second analyst's technique labels (``second-analyst/techniques-*.yaml``) against the set's own:
    how far two careful people agree bounds what any extractor can score against one of them."""
    second = second_labels(folder, "techniques", subset)
    if not second:
        return None
    labels, score = load_labels(folder), Score()
    for stem, ids in second.items():
        score.add(stem, truth(labels[stem])["techniques"], {str(i).upper() for i in ids or []})  # type: ignore[attr-defined]
    return len(second), score


def label_agreement(folder: Path, subset: str) -> dict[str, Score]:
    """A second analyst's category and severity (``second-analyst/category-severity-*.yaml``, one
    ``{category, severity}`` per article) against the set's own: an accuracy per field, over the articles
    both labelled; no field when there is no such file."""
    second, labels = second_labels(folder, "category-severity", subset), load_labels(folder)
    scores: dict[str, Score] = {}
    for stem, given in second.items():
        for field in ("category", "severity"):
            theirs = given.get(field) if isinstance(given, dict) else None
            ours = labels.get(stem, {}).get(field)
            if theirs and ours:
                scores.setdefault(field, Score()).add(stem, {str(ours)}, {str(theirs).strip().lower()})
    return scores


def print_agreement(folder: Path, subset: str) -> None:
    found = agreement(folder, subset)
    if found:
        count, score = found
        precision, recall, f1 = score.prf()
        print(
            f"techniques, a second analyst against the labels ({count} articles with techniques): "
            f"P {precision:.2f} / R {recall:.2f} / F1 {f1:.4f}"
        )
    for field, score in label_agreement(folder, subset).items():
        print(
            f"{field}, a second analyst against the labels ({score.counts['tp'] + score.counts['fn']} articles): "
            f"accuracy {score.prf()[0]:.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="passes over each set when timing ctiwire")
    parser.add_argument("--errors", action="store_true", help="list every false hit and miss on the tuning set")
    parser.add_argument("--subset", default="", help="only the articles whose name starts with this prefix")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated sets to score (default: all)")
    parser.add_argument("--no-baselines", action="store_true", help="score ctiwire only (no ioc-finder, iocsearcher)")
    parser.add_argument(
        "--tram",
        action="store_true",
        help="instead: techniques on TRAM 2's reports, 5-fold by report (scripts/bench_tram.py)",
    )
    args, rest = parser.parse_known_args()
    if args.tram:
        from bench_tram import main as tram  # scripts/, beside this file

        return tram(rest)
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    chosen = [name for name in args.sets.split(",") if name]
    if unknown := set(chosen) - set(SETS):
        parser.error(f"unknown sets: {sorted(unknown)}")
    sets = {
        name: found
        for name in chosen
        if (found := run_set(SETS[name], args.subset, args.repeat, baselines=not args.no_baselines))
    }
    print_table(sets)
    print(f"\ncommand: scripts/bench enrich {shlex.join(sys.argv[1:])}".rstrip())
    for name in OPEN_SETS if args.errors else ():
        if name in sets:
            print_errors(name, sets[name][1]["ctiwire"])
    if "held-out" in sets:
        print()
        print_agreement(SETS["held-out"], args.subset)
        print_targets(sets["held-out"][1]["ctiwire"])


if __name__ == "__main__":
    main()
