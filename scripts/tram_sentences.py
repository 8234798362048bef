"""Derive the TRAM 2 training sentences that ship with the package from ``../shared/data/tram2``.

MITRE's TRAM 2 (Apache-2.0) marks, in 151 real reports, the spans that tell an ATT&CK technique. The
procedure classifier reads whole sentences and their clauses, so each marked span is widened to the
sentence around it (a span that is itself a long passage stays as marked). The sentences no marked span
touches are kept too, as report prose that tells none of TRAM's techniques (``unmarked-*.json``, split so
that no file passes 1 MB). Both are kept by report, so that the cross-validation of ``scripts/bench tram``
can leave a report's sentences out of the model it measures that report with. Writes
``ingest/enrich/tram/sentences.json`` and ``unmarked-*.json`` beside TRAM's LICENSE and NOTICE (kept
unchanged, as the licence asks).

    python scripts/tram_sentences.py [--source ../shared/data/tram2]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "ingest" / "enrich" / "tram"
_TECHNIQUE = re.compile(r"\((T\d{4}(?:\.\d{3})?)\)\s*$")
_END = re.compile(r"[.!?](?=\s)|\n")
_LONGEST = 400  # characters: a wider "sentence" is a run of text without punctuation; keep the span
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_PROSE_WORDS = 6  # fewer words is a heading, a table cell or an indicator line, not prose
_FILE_BYTES = 900_000  # each unmarked-*.json stays below the repository's 1 MB bound on tracked files


def report_body(signal: str) -> str:
    """The report text without its first lines (``title:`` and ``url:``)."""
    lines = signal.split("\n")
    while lines and lines[0].lower().startswith(("title:", "url:")):
        lines.pop(0)
    return "\n".join(lines)


def annotations(report: dict[str, object]) -> list[tuple[str, int, int]]:
    """(technique id, start, end) of every span people marked in a report."""
    found = []
    for aset in report["asets"]:  # type: ignore[attr-defined]
        match = _TECHNIQUE.search(aset["type"])
        if match:
            found += [(match.group(1), int(span[0]), int(span[1])) for span in aset.get("annots", [])]
    return found


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence that holds ``text[start:end]`` (the span itself when that sentence is too long)."""
    before = max((m.end() for m in _END.finditer(text, 0, start)), default=0)
    after = _END.search(text, end)
    sentence = text[before:after.end() if after else len(text)]
    if len(sentence) > _LONGEST:
        sentence = text[start:end]
    return " ".join(sentence.split())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every sentence of ``text``, cut where ``sentence_around`` cuts."""
    starts = [0, *(match.end() for match in _END.finditer(text))]
    return [(start, end) for start, end in zip(starts, [*starts[1:], len(text)], strict=True) if end > start]


def unmarked(signal: str, spans: list[tuple[int, int]]) -> list[str]:
    """The prose sentences of a report that no marked span touches (its header lines left out)."""
    found = []
    for start, end in sentence_spans(signal):
        sentence = " ".join(signal[start:end].split())
        if (len(_WORD.findall(sentence)) < _PROSE_WORDS or len(sentence) > _LONGEST
                or sentence.lower().startswith(("title:", "url:"))
                or any(low < end and high > start for low, high in spans)):
            continue
        found.append(sentence)
    return found


def chunks(reports: dict[str, list[str]]) -> list[dict[str, list[str]]]:
    """The reports dealt in name order into files of at most ``_FILE_BYTES`` of JSON each."""
    files: list[dict[str, list[str]]] = [{}]
    for name, sentences in sorted(reports.items()):
        if len(json.dumps({**files[-1], name: sentences}, ensure_ascii=False)) > _FILE_BYTES:
            files.append({})
        files[-1][name] = sentences
    return files


def derive_unmarked(source: Path, marked: set[str]) -> dict[str, list[str]]:
    """Unmarked sentences by report, but those written again where someone marked them (the same
    sentence twice in a report, or a report published twice)."""
    reports = {}
    for path in sorted((source / "reports").glob("*.mjson")):
        report = json.loads(path.read_text(encoding="utf-8"))
        spans = [(start, end) for _, start, end in annotations(report)]
        reports[path.stem] = [text for text in unmarked(report["signal"], spans) if text not in marked]
    return reports


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")


def derive(source: Path) -> dict[str, list[list[str]]]:
    reports: dict[str, list[list[str]]] = {}
    for path in sorted((source / "reports").glob("*.mjson")):
        report = json.loads(path.read_text(encoding="utf-8"))
        signal = report["signal"]
        pairs = {(technique_id, sentence_around(signal, start, end))
                 for technique_id, start, end in annotations(report)}
        reports[path.stem] = sorted([label, text] for label, text in pairs if text)
    return reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "data" / "tram2")
    args = parser.parse_args()
    TARGET.mkdir(parents=True, exist_ok=True)
    reports = derive(args.source)
    write_json(TARGET / "sentences.json",
               {"source": "MITRE TRAM 2 (data/training/tram2_data), Apache-2.0; spans widened to sentences",
                "reports": reports})
    for old in TARGET.glob("unmarked-*.json"):
        old.unlink()
    marked = {text for items in reports.values() for _, text in items}
    for number, part in enumerate(chunks(derive_unmarked(args.source, marked)), 1):
        write_json(TARGET / f"unmarked-{number}.json",
                   {"source": "MITRE TRAM 2 (data/training/tram2_data), Apache-2.0; sentences no span marks",
                    "reports": part})
    for name in ("LICENSE.txt", "NOTICE.txt"):
        shutil.copyfile(args.source / name, TARGET / name)


if __name__ == "__main__":
    main()
