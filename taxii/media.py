"""TAXII 2.1 media types, content negotiation and the TAXII timestamp form.

TAXII 2.1 section 1.6.8: every TAXII response is ``application/taxii+json;version=2.1``; a request
whose ``Accept`` names no TAXII 2.1 media type is answered 406 (section 3.6, "406 Not Acceptable").
``version`` may be omitted from the media range, which means the latest version the server speaks.
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


def accepts_taxii21(accept: str | None) -> bool:
    """True when ``accept`` has a media range for TAXII 2.1 JSON with a non-zero weight.

    Only ``application/taxii+json`` counts, with ``version=2.1`` or without a version: a wildcard
    such as ``*/*`` names no TAXII media type, and a missing header is treated the same way, because
    TAXII 2.1 section 1.6.8.1 requires clients to send one.
    """
    if accept == TAXII_21:
        return True  # what taxii2-client and most clients send: no need to parse it
    for media_range in (accept or "").split(","):
        media, *rest = media_range.split(";")
        if media.strip().lower() != _TAXII_BASE:
            continue
        params = _params(rest)
        if _weight(params) > 0 and params.get("version", "2.1") == "2.1":
            return True
    return False


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
