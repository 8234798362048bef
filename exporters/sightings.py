"""Sightings and false positives reported by accounts (POST /api/v1/sightings, ``ctiwire sightings``).

Pure of HTTP, as the lookup is: :func:`read_reports` turns a request body into reports or raises
:class:`ReportError` naming every bad item (nothing is recorded then: a list is taken whole or not at
all), and :func:`report_sightings` keeps the reports, counts distinct accounts per value and kind onto
the IOC records, and revokes a value for everyone once enough accounts call it a false positive.
Values are read as the bulk lookup reads them (defanged forms accepted; ``exporters.lookup.read_exact``).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from exporters.lookup import Indicator, IndicatorError, read_exact
from store import events
from store.ports import Stores
from store.ports.sightings import Tally
from store.records import IOC_TYPES, SIGHTING_KINDS, Ioc, Sighting, parse_iso
from store.sightings import count_onto_records

MAX_REPORTS = 1_000
MAX_NOTE_CHARS = 500
# The problems one 400 lists: enough to fix a list, bounded whatever its size.
MAX_PROBLEMS = 50
# A client's clock may run a little ahead of the server's: observed_at up to this far ahead is taken as now.
CLOCK_SKEW = timedelta(minutes=1)
FIELDS = ("value", "type", "kind", "observed_at", "note")
Answer = dict[str, Any]


class ReportError(ValueError):
    """A body that is not a list of valid reports; ``problems`` name each bad item (index, field, reason)."""

    def __init__(self, message: str, problems: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.problems = problems


class _Problem(ValueError):
    def __init__(self, field: str | None, reason: str) -> None:
        super().__init__(reason)
        self.field = field


@dataclass(frozen=True, slots=True)
class Report:
    """One valid report: the value as sent, its indicator, kind, when it was observed and the note."""

    input: str
    indicator: Indicator
    kind: str
    observed_at: datetime
    note: str = ""


def _text(item: dict[str, Any], name: str, required: bool = False) -> str | None:
    value = item.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise _Problem(name, "is required: a string" if value is None else "is not a string")
    return value


def _indicator(raw: str, given_type: str | None) -> Indicator:
    if given_type is not None and given_type not in IOC_TYPES:
        raise _Problem("type", f"is not one of {', '.join(IOC_TYPES)}")
    try:
        return read_exact(raw, given_type)
    except IndicatorError as exc:
        raise _Problem("value", str(exc)) from exc


def _observed(text: str | None, now: datetime) -> datetime:
    if text is None:
        return now
    try:
        observed = parse_iso(text)
    except ValueError as exc:
        raise _Problem("observed_at", "is not an ISO 8601 date-time") from exc
    if observed > now + CLOCK_SKEW:
        raise _Problem("observed_at", "is in the future")
    return min(observed, now)


def _report(item: Any, now: datetime) -> Report:
    if not isinstance(item, dict):
        raise _Problem(None, "is not a JSON object")
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise _Problem(unknown[0], f"is not a field of a sighting ({', '.join(FIELDS)})")
    raw, kind = _text(item, "value", True) or "", _text(item, "kind", True)
    if kind not in SIGHTING_KINDS:
        raise _Problem("kind", f"is not one of {', '.join(SIGHTING_KINDS)}")
    note = _text(item, "note") or ""
    if len(note) > MAX_NOTE_CHARS:
        raise _Problem("note", f"is longer than {MAX_NOTE_CHARS} characters")
    indicator = _indicator(raw, _text(item, "type"))
    return Report(raw, indicator, kind, _observed(_text(item, "observed_at"), now), note)


def read_reports(body: Any, now: datetime) -> list[Report]:
    """The reports of a body: one object, or a list of 1 to ``MAX_REPORTS``; ReportError otherwise."""
    items = body if isinstance(body, list) else [body]
    if not items:
        raise ReportError("the body is an empty list: send one report or a list of them", [])
    if len(items) > MAX_REPORTS:
        raise ReportError(f"the body holds {len(items):,} reports; at most {MAX_REPORTS:,} at once", [])
    reports, problems = [], []
    for index, item in enumerate(items):
        try:
            reports.append(_report(item, now))
        except _Problem as exc:
            problems.append({"index": index, "field": exc.field, "reason": str(exc)})
    if problems:
        raise ReportError(
            f"{len(problems):,} of {len(items):,} reports are invalid; none was recorded", problems[:MAX_PROBLEMS]
        )
    return reports


def _answer(report: Report, tally: Tally, known: bool) -> Answer:
    ioc_type, value = report.indicator
    return {
        "input": report.input,
        "type": ioc_type,
        "value": value,
        "kind": report.kind,
        "known": known,
        "sightings": tally.seen,
        "false_positives": tally.false_positives,
    }


async def _revoke_reached(stores: Stores, changes: list[tuple[Ioc, Ioc]], quorum: int, at: datetime) -> None:
    """Revoke for everyone each record whose distinct false-positive reports reached ``quorum`` with this
    request (``store.events.revoke``: the record's new version, and an ``ioc-revoked`` event)."""
    for held, record in changes:
        if held.false_positives < quorum <= record.false_positives:
            reason = f"reported as a false positive by {record.false_positives} accounts"
            await events.revoke(stores, record.type, record.value, reason, at)


async def report_sightings(
    stores: Stores, reports: Sequence[Report], user_id: str, now: datetime, quorum: int
) -> list[Answer]:
    """Keep ``reports`` of the account ``user_id``, count them onto the IOC records (``modified`` and the
    data version move, so pollers and caches see the change) and answer each in order with the value's
    counts after it; ``known`` says whether the value has a record."""
    sightings = [
        Sighting(str(uuid.uuid4()), user_id, r.indicator[0], r.indicator[1], r.kind, r.observed_at, now, r.note)
        for r in reports
    ]
    tallies = await stores.sightings.add_sightings(sightings)
    changes = await count_onto_records(stores.iocs, tallies, now)
    await _revoke_reached(stores, changes, quorum, now)
    known = {(ioc.type, ioc.value) for _, ioc in changes}
    missing = [key for key in tallies if key not in known]
    for ioc_type in {t for t, _ in missing}:
        held = await stores.iocs.get_iocs(ioc_type, [v for t, v in missing if t == ioc_type])
        known |= {(ioc_type, v) for v in held}
    return [_answer(r, tallies[r.indicator], r.indicator in known) for r in reports]
