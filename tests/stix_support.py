"""The independent STIX checks shared by the exporter, conformance and TAXII tests: stix2-validator in
strict mode, ``stix2.parse`` without custom content, and reference resolution within a bundle."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import orjson


def validate_stix(body: bytes) -> dict[str, Any]:
    """The parsed bundle; fails on any validator error or warning, or when ``stix2`` refuses it."""
    import stix2
    from stix2validator import ValidationOptions, validate_parsed_json

    bundle: dict[str, Any] = orjson.loads(body)
    options = ValidationOptions(version="2.1", strict=True, disabled=["uuid-check", "extref-hashes"])
    result = validate_parsed_json(copy.deepcopy(bundle), options)
    problems = [str(e) for e in result.errors] + [str(w) for w in result.warnings]
    assert result.is_valid and not problems, problems
    stix2.parse(copy.deepcopy(bundle), allow_custom=False)
    return bundle


def _refs(value: Any, key: str = "") -> Iterator[str]:
    """Every id an object refers to: ``*_ref`` and ``*_refs`` properties, at any depth."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _refs(item, name)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item, key)
    elif isinstance(value, str) and (key.endswith("_ref") or key.endswith("_refs")):
        yield value


def dangling_refs(objects: list[dict[str, Any]]) -> set[str]:
    """Ids referred to by some object that no object of ``objects`` has."""
    held = {o["id"] for o in objects}
    return {ref for obj in objects for ref in _refs(obj)} - held
