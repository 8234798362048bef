"""TAXII 2.1 query parameters as an immutable, normalised value (sections 3.4 and 3.5). Pure: no I/O.

Several values of one filter (comma-separated, or the parameter repeated) are ORed; different filters
are ANDed (section 3.4.2). Values are sorted and de-duplicated, so two requests asking the same thing
compare equal and a ``next`` token can name the filters it belongs to.
``added_after``, ``limit`` and ``next`` take one value (server.params.single_value). A malformed, empty or
blank value, or a ``match[...]`` field the endpoint does not support, is a 400.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from server.errors import BadRequest, bad_param
from server.params import MAX_INTEGER, every_value, single_value
from server.windows import cap_limit
from store.ioctypes import REGISTRY
from store.records import iso, parse_iso
from taxii.collections import stix_type_of
from taxii.media import parse_timestamp, taxii_time

# One value of each match filter, unanchored (the OpenAPI description states them as list patterns):
# STIX 2.1 section 2.7 (type names: 3-250 characters, lowercase, digits, hyphens) and 2.9 (identifier:
# the type, ``--`` and a lower-case UUID).
TYPE_PATTERN = r"[a-z][a-z0-9-]{1,248}[a-z0-9]"
ID_PATTERN = TYPE_PATTERN + r"--[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
SPEC_VERSION_PATTERN = r"[0-9]+\.[0-9]+"
_ID = re.compile(f"^{ID_PATTERN}$")
_TYPE = re.compile(f"^{TYPE_PATTERN}$")
_SPEC_VERSION = re.compile(f"^{SPEC_VERSION_PATTERN}$")
DEFAULT_PAGE = 1_000
MAX_PAGE = 10_000  # never exceeded; a tier's IOC result cap lowers it further (Pro: 10,000)
VERSION_KEYWORDS: frozenset[str] = frozenset({"first", "last", "all"})
# A keyword in any letter case, or an RFC 3339 timestamp with a time zone (taxii.media.parse_timestamp).
VERSION_PATTERN = "|".join(["".join(f"[{c}{c.upper()}]" for c in word) for word in sorted(VERSION_KEYWORDS)]
                           + [r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
                              r"(?:[Zz]|[+-][0-9]{2}:[0-9]{2})"])
SERVED_SPEC_VERSION = "2.1"

# Endpoint -> the match fields it takes (TAXII 2.1 sections 5.3-5.7). ``added_after`` is taken by all.
OBJECTS_FIELDS: frozenset[str] = frozenset({"id", "type", "version", "spec_version"})
OBJECT_FIELDS: frozenset[str] = frozenset({"version", "spec_version"})
VERSIONS_FIELDS: frozenset[str] = frozenset({"spec_version"})


@dataclass(frozen=True, slots=True)
class Filters:
    """The filters of one request; an empty tuple means "not filtered on this field"."""

    added_after: datetime | None = None
    ids: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()
    spec_versions: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return self == Filters()

    def signature(self) -> dict[str, Any]:
        """A JSON form for ``next`` tokens; :func:`from_signature` gives back an equal value."""
        return {"a": iso(self.added_after) if self.added_after else None, "i": list(self.ids),
                "t": list(self.types), "v": list(self.versions), "s": list(self.spec_versions)}

    def stix_types(self) -> frozenset[str] | None:
        """STIX types that can match: ``match[type]`` and the type part of each ``match[id]`` (None: any)."""
        wanted = [frozenset(self.types)] if self.types else []
        if self.ids:
            wanted.append(frozenset(i.partition("--")[0] for i in self.ids))
        return frozenset.intersection(*wanted) if wanted else None

    def serves_nothing(self) -> bool:
        """Only STIX 2.1 is served, so a ``match[spec_version]`` without 2.1 matches nothing."""
        return bool(self.spec_versions) and SERVED_SPEC_VERSION not in self.spec_versions


NO_FILTERS = Filters()


def from_signature(data: Any) -> Filters:
    """The filters a token carries; ValueError when the token's payload is not a signature."""
    if not isinstance(data, dict):
        raise ValueError("filters missing")
    lists = [data.get(k) for k in ("i", "t", "v", "s")]
    if not all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in lists):
        raise ValueError("filters malformed")
    added = data.get("a")
    return Filters(parse_iso(added) if isinstance(added, str) else None, *(tuple(v) for v in lists))  # type: ignore[arg-type]


def _values(args: Mapping[str, Sequence[bytes]], name: str) -> tuple[str, ...]:
    """Every value of ``name``: comma-separated and repeated forms merged, sorted, blank items dropped."""
    found: set[str] = set()
    for text in every_value(args, name):
        found.update(v.strip() for v in text.split(",") if v.strip())
    return tuple(sorted(found))


def _check(name: str, values: tuple[str, ...], pattern: re.Pattern[str], what: str) -> tuple[str, ...]:
    bad = [v for v in values if not pattern.match(v)]
    if bad:
        raise bad_param(name, f"{bad[0]!r} is not {what}")
    return values


def _versions(values: tuple[str, ...]) -> tuple[str, ...]:
    """``first``, ``last``, ``all`` or RFC 3339 timestamps (normalised to microseconds)."""
    out: set[str] = set()
    for value in values:
        if value.lower() in VERSION_KEYWORDS:
            out.add(value.lower())
            continue
        try:
            out.add(taxii_time(parse_timestamp(value)))
        except ValueError as exc:
            raise bad_param("match[version]", f"{value!r} is not first, last, all or an RFC 3339 timestamp") from exc
    return tuple(sorted(out))


def _added_after(args: Mapping[str, Sequence[bytes]]) -> datetime | None:
    value = single_value(args, "added_after")
    if value is None:
        return None
    try:
        # Millisecond truncation is exact here: date_added is stored in milliseconds, so for any t,
        # "date_added > t" and "date_added > t truncated to the millisecond" select the same records.
        return parse_iso(parse_timestamp(value).isoformat())
    except ValueError as exc:
        raise bad_param("added_after", "must be an RFC 3339 timestamp such as 2026-01-31T00:00:00.000Z") from exc


def _refuse_unsupported(args: Mapping[str, Sequence[bytes]], fields: frozenset[str]) -> None:
    for name in args:
        if name.startswith("match[") and name.endswith("]") and name[6:-1] not in fields:
            supported = ", ".join(f"match[{f}]" for f in sorted(fields)) or "none"
            raise BadRequest(f"filter {name!r} is not supported here (supported: {supported})",
                             details={"parameter": name})


def parse_filters(args: Mapping[str, Sequence[bytes]], fields: frozenset[str] = OBJECTS_FIELDS) -> Filters:
    """The filters of a query string, for an endpoint that takes the match ``fields``."""
    if not any(name == "added_after" or name.startswith("match[") for name in args):
        return NO_FILTERS  # most requests filter on nothing: skip the five lookups and validations
    _refuse_unsupported(args, fields)
    return Filters(
        added_after=_added_after(args),
        ids=_check("match[id]", _values(args, "match[id]"), _ID, "a STIX identifier"),
        types=_check("match[type]", _values(args, "match[type]"), _TYPE, "a STIX object type"),
        versions=_versions(_values(args, "match[version]")),
        spec_versions=_check("match[spec_version]", _values(args, "match[spec_version]"), _SPEC_VERSION,
                             "a STIX version such as 2.1"),
    )


def parse_limit(args: Mapping[str, Sequence[bytes]], default: int, maximum: int) -> int:
    """``limit``: an integer of at most ``MAX_INTEGER``, clamped to 1..``maximum`` like every ``limit`` of the
    API (server.windows.cap_limit; TAXII 2.1 section 3.4.2 lets the server return fewer objects)."""
    raw = single_value(args, "limit")
    if raw is None:
        return default
    try:
        limit = int(raw)
    except ValueError as exc:
        raise bad_param("limit", "must be an integer") from exc
    if limit > MAX_INTEGER:
        raise bad_param("limit", f"must be an integer of at most {MAX_INTEGER:,}")
    return cap_limit(limit, maximum)[0]


class Matcher:
    """The filters checked on each built object: ids, types and version timestamps.

    The store already applies ids and types (``IocQuery.stix_ids``, :func:`store_types`); checking them
    again costs a set lookup and keeps a page exact whatever the store returned.

    Each record has one version, its ``modified``: ``first``, ``last`` and ``all`` all select it, and
    a timestamp selects it only when equal (TAXII 2.1 section 3.4.2, ``match[version]``).
    """

    __slots__ = ("ids", "types", "times")

    def __init__(self, filters: Filters) -> None:
        self.ids = frozenset(filters.ids) or None
        self.types = frozenset(filters.types) or None
        keywords = VERSION_KEYWORDS.intersection(filters.versions)
        self.times = None if keywords or not filters.versions else frozenset(filters.versions)

    @property
    def narrows(self) -> bool:
        """True when some records the store returns may be rejected here: only a version timestamp,
        since ids and types are filtered by the store."""
        return self.times is not None

    def __call__(self, obj: dict[str, Any]) -> bool:
        if self.ids is not None and obj["id"] not in self.ids:
            return False
        if self.types is not None and obj["type"] not in self.types:
            return False
        return self.times is None or taxii_time(parse_timestamp(version_of(obj))) in self.times


def version_of(obj: dict[str, Any]) -> str:
    """An object's version: its ``modified``, or ``created`` for an object that has none (a marking
    definition, STIX 2.1 section 7.2.1; TAXII 2.1 section 3.4.2, ``match[version]``)."""
    return str(obj["modified"] if "modified" in obj else obj["created"])


def store_types(collection_types: tuple[str, ...], filters: Filters) -> tuple[str, ...] | None:
    """The IOC types the store must filter on: None for every type, () when nothing can match.

    Every type is None rather than the full list: a ``type IN (...)`` clause makes SQLite read the
    (type, value) index and sort every matching row per page, where no clause walks the date index.
    """
    wanted = filters.stix_types()
    types = collection_types if wanted is None else tuple(t for t in collection_types if stix_type_of(t) in wanted)
    return None if set(types) == set(REGISTRY) else types
