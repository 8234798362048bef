"""Derive the TRAM 2 training sentences that ship with the package from ``../shared/data/tram2``.

MITRE's TRAM 2 (Apache-2.0) marks, in 151 real reports, the spans that tell an ATT&CK technique. The
procedure classifier reads whole sentences and their clauses, so each marked span is widened to the
sentence around it (a span that is itself a long passage stays as marked). The sentences are kept by
report, so that the cross-validation of ``scripts/bench_enrich.py --tram`` can leave a report's
sentences out of the model it measures that report with. Writes ``ingest/enrich/tram/sentences.json``
beside TRAM's LICENSE and NOTICE (kept unchanged, as the licence asks).

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
    data = {"source": "MITRE TRAM 2 (data/training/tram2_data), Apache-2.0; spans widened to sentences",
            "reports": derive(args.source)}
    (TARGET / "sentences.json").write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n",
                                          encoding="utf-8")
    for name in ("LICENSE.txt", "NOTICE.txt"):
        shutil.copyfile(args.source / name, TARGET / name)


if __name__ == "__main__":
    main()
