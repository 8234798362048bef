"""TAXII 2.1 media types, content negotiation and the TAXII timestamp form.

TAXII 2.1 section 1.6.8: every TAXII response is ``application/taxii+json;version=2.1``, and a request
whose ``Accept`` excludes it is answered 406 (section 3.6, "406 Not Acceptable"). ``Accept`` is read as
RFC 9110 section 12.5.1 reads it: the most specific media range matching the TAXII type decides, by its
weight (``q=0`` excludes). Wildcards (``*/*``, ``application/*``), a missing header and plain
``application/json`` (how OpenCTI's and other SIEM clients call, and medallion answered them 406:
OpenCTI issue #4246) all admit TAXII JSON. ``version`` may be omitted from a TAXII media range, which
means the latest version the server speaks.
"""

from __future__ import annotations

from datetime import UTC, datetime

TAXII_21 = "application/taxii+json;version=2.1"
STIX_21 = "application/stix+json;version=2.1"
_TAXII_BASE = "application/taxii+json"


def _params(parts: list[str]) -> dict[str, str]:
    """Media-range parameters, names lowercased and quotes dropped (RFC 9110 section 5.6.6)."""
    params: dict[str, str] = {}
    for part in parts:
        name, sep, value = part.partition("=")
        if sep:
            params[name.strip().lower()] = value.strip().strip('"')
    return params


def _weight(params: dict[str, str]) -> float:
    try:
        return float(params.get("q", "1"))
    except ValueError:
        return 0.0


# How specific each media range that admits TAXII 2.1 JSON is (RFC 9110 section 12.5.1): the most
# specific range present decides. ``application/json`` sits between the TAXII type and the wildcards: a
# JSON client accepts the TAXII JSON, yet an explicit ``application/taxii+json;q=0`` still refuses it.
_SPECIFICITY: dict[str, int] = {"*/*": 1, "application/*": 2, "application/json": 3, _TAXII_BASE: 4}


def _rank(media: str, params: dict[str, str]) -> int:
    """How specifically a media range names TAXII 2.1 JSON: 0 when it does not admit it at all."""
    rank = _SPECIFICITY.get(media, 0)
    if media != _TAXII_BASE or "version" not in params:
        return rank
    return rank + 1 if params["version"] == "2.1" else 0  # another TAXII version admits nothing here


def accepts_taxii21(accept: str | None) -> bool:
    """True unless ``accept`` excludes TAXII 2.1 JSON: no range admits it, or the most specific one that
    does has weight 0. A missing or blank header accepts anything (RFC 9110 section 12.5.1)."""
    if accept == TAXII_21 or not (accept or "").strip():
        return True  # what taxii2-client and most clients send, or no preference: no need to parse it
    best, weight = 0, 0.0
    for media_range in (accept or "").split(","):
        media, *rest = media_range.split(";")
        params = _params(rest)
        rank = _rank(media.strip().lower(), params)
        if rank > best or (rank == best and rank and _weight(params) > weight):
            best, weight = rank, _weight(params)
    return best > 0 and weight > 0


def taxii_time(value: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ssssssZ``: TAXII 2.1 section 3.3.1 for the X-TAXII-Date-Added headers."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: str) -> datetime:
    """An RFC 3339 timestamp at full precision (``Z`` or an offset); ValueError otherwise.

    TAXII 2.1 section 2.1 (``timestamp``) requires a time zone; a date alone or a naive time is
    refused rather than guessed.
    """
    cleaned = text.strip()
    if "T" not in cleaned.upper():
        raise ValueError("not an RFC 3339 date-time")
    value = datetime.fromisoformat(cleaned.replace("z", "Z").replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("an RFC 3339 date-time needs 'Z' or an offset")
    return value.astimezone(UTC)
