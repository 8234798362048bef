"""The consumers' own tools for the network formats, used by tests/exporters/conftest.py's ``Checks``.

- blocklist: read back as any list consumer reads it (``#`` lines are comments, one value per line), each
  section's stated count checked against its values;
- rpz: BIND's ``named-checkzone`` (Debian's bind9-utils; ``scripts/test`` installs it) with full integrity
  and name checks, its canonical dump read back as records;
- suricata: ``suricata-check`` (PyPI, the dev extra), every rule parsed and analysed;
- ecs: the ECS field definitions of the ``@elastic/ecs`` npm package, which ``scripts/test`` fetches into
  ``.cache/ecs/ecs_flat.json``: every field exists, every value has its type, enumerated values are allowed.
Each skips with the reason when its tool is missing.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import shutil
import subprocess
import tempfile
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest

REPO = Path(__file__).resolve().parents[1]
ECS_FLAT = REPO / ".cache" / "ecs" / "ecs_flat.json"
ZONE_NAME = "rpz.ctiwire"
_SECTION = re.compile(r"^# ([a-z0-9-]+): (\d+) value\(s\)")
_TEXT_TYPES = {"keyword", "constant_keyword", "wildcard", "match_only_text", "text"}


def blocklist(body: bytes) -> dict[str, list[str]]:
    """Each section's values (type -> values), after checking its stated count and the line rules."""
    text = body.decode("utf-8")
    assert text.endswith("\n") and "\r" not in text
    sections: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    current = None
    for line in text.split("\n")[:-1]:
        if match := _SECTION.match(line):
            current = match.group(1)
            counts[current], sections[current] = int(match.group(2)), []
        elif not line.startswith("#"):
            assert current is not None and line and line == line.strip() and " " not in line, repr(line)
            sections[current].append(line)
    assert {t: len(v) for t, v in sections.items()} == counts
    return sections


def rpz(body: bytes) -> list[tuple[str, str, str]]:
    """(owner, type, data) of every record, as named-checkzone loads and dumps the zone."""
    binary = shutil.which("named-checkzone")
    if binary is None:
        pytest.skip("named-checkzone is not installed (Debian: apt-get install bind9-utils; scripts/test does)")
    with tempfile.TemporaryDirectory() as folder:
        zone = Path(folder) / "ctiwire.rpz"
        zone.write_bytes(body)
        done = subprocess.run(
            [binary, "-i", "full", "-k", "fail", "-n", "fail", "-D", "-o", "-", ZONE_NAME, str(zone)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    records = []
    for line in done.stdout.splitlines():
        owner, _ttl, _class, rtype, data = line.split(None, 4)
        records.append((owner, rtype, data))
    return records


def suricata(body: bytes) -> list[Any]:
    """Every rule parsed by suricata-check; no issue of WARNING level or above (ERROR: a broken rule)."""
    try:
        import suricata_check
        from suricata_check.utils.rule import parse
    except ImportError:
        pytest.skip("suricata-check is not installed (pip install the dev extra; scripts/test does)")
    # The tool logs each metadata key outside the Emerging Threats set; ``source`` (the feed) is ours on purpose.
    logging.getLogger("suricata_check.utils.checker").setLevel(logging.ERROR)
    rules = []
    for line in body.decode("utf-8").split("\n")[:-1]:
        if line and not line.startswith("#"):
            rule = parse(line)
            assert rule is not None and rule.raw == line, line
            issues = [
                (i.code, i.message)
                for i in suricata_check.analyze_rule(rule).issues
                if (i.severity or 0) >= logging.WARNING
            ]
            assert not issues, (line, issues)
            rules.append(rule)
    return rules


@cache
def ecs_fields() -> dict[str, Any]:
    if not ECS_FLAT.exists():
        pytest.skip(
            f"the ECS field definitions are not at {ECS_FLAT}: scripts/test fetches them "
            "(npm pack @elastic/ecs@<pinned>)"
        )
    fields: dict[str, Any] = orjson.loads(ECS_FLAT.read_bytes())
    return fields


def flatten(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in document.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def ecs(body: bytes) -> list[dict[str, Any]]:
    """Every line an ECS document whose fields exist, with values of their types and allowed values."""
    text = body.decode("utf-8")
    assert text == "" or text.endswith("\n")
    # Lines end at "\n" alone (NDJSON): U+2028 or U+0085 inside a JSON string is no line break.
    documents = [flatten(orjson.loads(line)) for line in text.split("\n")[:-1]]
    for document in documents:
        for name, value in document.items():
            ecs_value(name, value)
    return documents


def ecs_value(name: str, value: Any) -> None:
    definition = ecs_fields().get(name)
    assert definition is not None, f"{name} is no ECS field"
    is_array = "array" in definition.get("normalize", [])
    assert isinstance(value, list) == is_array, f"{name}: array {is_array} in ECS, got {value!r}"
    allowed = [a["name"] for a in definition.get("allowed_values", [])] + definition.get("expected_values", [])
    for item in value if is_array else [value]:
        assert _has_type(definition["type"], item), f"{name} is a {definition['type']}, got {item!r}"
        assert not allowed or item in allowed, f"{name}: {item!r} is not one of {allowed}"


def _has_type(ecs_type: str, value: Any) -> bool:
    if ecs_type in _TEXT_TYPES:
        return isinstance(value, str)
    if ecs_type == "date":
        return isinstance(value, str) and datetime.fromisoformat(value).tzinfo is not None
    if ecs_type == "ip":
        return isinstance(value, str) and bool(ipaddress.ip_address(value))
    if ecs_type == "long":
        return isinstance(value, int) and not isinstance(value, bool)
    if ecs_type in ("float", "scaled_float"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if ecs_type == "boolean":
        return isinstance(value, bool)
    raise AssertionError(f"no check for ECS type {ecs_type}")
