"""Typed reading of query parameters. Pure: every malformed known parameter is a 400 naming it.

Unknown parameters are ignored (spec, Errors). A known one is read exactly as sent, and is malformed when
given more than once (a list is one comma-separated value), empty or blank, or holding a control character: each
of those is a 400 naming it rather than a guess at which value, or whether any, was meant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from server.errors import BadRequest, bad_param
from server.tokens import verify
from store.records import parse_iso

_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


# The largest value any integer parameter accepts (documented as each one's OpenAPI ``maximum``).
MAX_INTEGER = 2**31 - 1
# C0 controls, DEL and C1 controls (Unicode category Cc): never part of a meaningful value.
CONTROL_CHARACTERS = "\\x00-\\x1f\\x7f-\\x9f"
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}]")


def every_value(args: Mapping[str, Sequence[bytes]], name: str) -> tuple[str, ...]:
    """Every value given for ``name``, exactly as sent: for the few parameters documented as repeatable
    (TAXII 2.1 ``match[...]`` filters). An empty value or one holding a control character is a 400."""
    texts = []
    for raw in args.get(name, ()):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise bad_param(name, "is not valid UTF-8") from exc
        if _CONTROL.search(text):
            raise bad_param(name, "contains a control character")
        if not text.strip():
            raise bad_param(name, "is empty or blank; leave it out to use its default")
        texts.append(text)
    return tuple(texts)


def single_value(args: Mapping[str, Sequence[bytes]], name: str) -> str | None:
    """The one value given for ``name`` (None when absent); given more than once it is a 400."""
    if len(args.get(name, ())) > 1:
        raise bad_param(name, "is given more than once; send it once (a list is one comma-separated value)")
    values = every_value(args, name)
    return values[0] if values else None


T = TypeVar("T")


def read_cursor(
    params: Params, secret: str, kind: str, read: Callable[[dict[str, Any]], T], details: dict[str, Any]
) -> T | None:
    """``read`` of the payload of the ``cursor`` parameter signed for ``kind`` (server.tokens), None when
    absent; 400 ``invalid_cursor`` when it is tampered with, made for another order, or unreadable."""
    token = params.raw("cursor")
    if token is None:
        return None
    try:
        return read(verify(secret, kind, token))
    except (KeyError, ValueError, TypeError) as exc:  # InvalidToken is a ValueError
        raise BadRequest(
            "the cursor is invalid, tampered with, or belongs to another sort",
            code="invalid_cursor",
            details={"parameter": "cursor", **details},
        ) from exc


class Params:
    """The query string of one request, read parameter by parameter."""

    def __init__(self, args: Mapping[str, Sequence[bytes]]) -> None:
        self._args = args

    def raw(self, name: str) -> str | None:
        """The value of ``name`` (None when absent); see :func:`single_value`."""
        return single_value(self._args, name)

    def has(self, name: str) -> bool:
        return self.raw(name) is not None

    def text(self, name: str, default: str | None = None, choices: Iterable[str] | None = None) -> str | None:
        value = self.raw(name)
        if value is None:
            return default
        allowed = tuple(choices) if choices is not None else None
        if allowed is not None and value not in allowed:
            raise bad_param(name, f"must be one of {', '.join(allowed)}")
        return value

    def flag(self, name: str, default: bool | None = None) -> bool | None:
        value = self.raw(name)
        if value is None:
            return default
        if value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise bad_param(name, "must be true, false, 1 or 0")

    def integer(self, name: str, default: int | None = None, minimum: int | None = None,
                maximum: int = MAX_INTEGER) -> int | None:
        value = self.raw(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError as exc:
            raise bad_param(name, "must be an integer") from exc
        if minimum is not None and number < minimum:
            raise bad_param(name, f"must be at least {minimum}")
        if number > maximum:  # past 2**63 SQLite and orjson overflow; no parameter needs that much
            raise bad_param(name, f"must be at most {maximum:,}")
        return number

    def limit(self, default: int) -> int:
        """``limit`` as sent, or ``default``: any integer up to ``MAX_INTEGER``, which the caller clamps to its
        range (server.windows.cap_limit), because the spec clamps out-of-range limits rather than refusing them."""
        value = self.integer("limit", default)
        return default if value is None else value

    def number(self, name: str, low: float, high: float) -> float | None:
        value = self.raw(name)
        if value is None:
            return None
        try:
            number = float(value)
        except ValueError as exc:
            raise bad_param(name, "must be a number") from exc
        if math.isnan(number) or not low <= number <= high:
            raise bad_param(name, f"must be a number from {low:g} to {high:g}")
        return number

    def timestamp(self, name: str) -> datetime | None:
        value = self.raw(name)
        if value is None:
            return None
        try:
            return parse_iso(value)
        except (ValueError, OverflowError) as exc:
            raise bad_param(name, "must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z") from exc

    def csv(self, name: str, choices: Iterable[str] | None = None) -> tuple[str, ...]:
        """Comma-separated values, blanks dropped, order kept, duplicates removed."""
        value = self.raw(name)
        if value is None:
            return ()
        items = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
        allowed = tuple(choices) if choices is not None else None
        bad = [v for v in items if allowed is not None and v not in allowed]
        if bad:
            raise bad_param(name, f"unknown value(s) {', '.join(bad)}; allowed: {', '.join(allowed or ())}")
        return items
