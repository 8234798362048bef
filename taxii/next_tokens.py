"""``next`` tokens: where a page ended, signed with the server secret (TAXII 2.1 section 3.4.1, ``next``).

A token carries the keyset position of the last record decided on (date_added of its current version, IOC
type, value; taxii.page_query), the filters of the request that produced it, and the scope it was made for
(endpoint, collection and, for the object endpoint, the object id). It is signed by :mod:`server.tokens`,
so any process sharing the secret serves the next page and no paging state lives in memory. A flipped
byte, a token of another endpoint or collection, or a request whose filters differ from the token's is
refused (400).

A follow-up request may repeat the filters (as taxii2-client does) or send ``next`` alone; the filters
then come from the token. ``limit`` may change from page to page.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from server.errors import BadRequest
from server.tokens import InvalidToken, sign, verify
from store.records import iso, parse_iso
from taxii.filters import Filters, from_signature

# The kind names the order its positions are in: a token from when IOC objects were ordered by first_seen
# names a place in another order, so it is refused (400, start again) rather than resumed at the wrong place.
TOKEN_KIND = "taxii-next-added"


class Placed(Protocol):
    """Where an object stands in a collection's order: an IOC record, or a fixed object (taxii.page_query)."""

    @property
    def date_added(self) -> datetime: ...

    @property
    def type(self) -> str: ...

    @property
    def value(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Position:
    """The keyset position after which the next page starts (the store's IOC order)."""

    date_added: datetime
    ioc_type: str
    value: str

    @classmethod
    def of(cls, ioc: Placed) -> Position:
        return cls(ioc.date_added, ioc.type, ioc.value)

    def key(self) -> tuple[datetime, str, str]:
        return (self.date_added, self.ioc_type, self.value)


def scope(endpoint: str, collection_id: str, object_id: str = "") -> str:
    """What a token is valid for; an object id narrows it to one object's endpoint."""
    return f"{endpoint}:{collection_id}:{object_id}"


def make_token(secret: str, token_scope: str, filters: Filters, position: Position) -> str:
    payload: dict[str, Any] = {"s": token_scope, "f": filters.signature(),
                               "p": [iso(position.date_added), position.ioc_type, position.value]}
    return sign(secret, TOKEN_KIND, payload)


def _invalid(reason: str) -> BadRequest:
    return BadRequest(f"parameter 'next': {reason}; start again without 'next'", code="invalid_next",
                      details={"parameter": "next"})


def _decode(secret: str, token: str, token_scope: str) -> tuple[Filters, Position]:
    payload = verify(secret, TOKEN_KIND, token)
    if payload.get("s") != token_scope:
        raise InvalidToken("made for another endpoint, collection or object")
    position = payload.get("p")
    if not (isinstance(position, list) and len(position) == 3 and all(isinstance(p, str) for p in position)):
        raise InvalidToken("no position")
    try:
        return from_signature(payload.get("f")), Position(parse_iso(position[0]), position[1], position[2])
    except (ValueError, OverflowError) as exc:
        raise InvalidToken(str(exc)) from exc


def resume(secret: str, token: str, token_scope: str, asked: Filters) -> tuple[Filters, Position]:
    """The filters and position of a follow-up request; 400 ``invalid_next`` when they do not belong."""
    try:
        filters, position = _decode(secret, token, token_scope)
    except InvalidToken as exc:
        raise _invalid("not a token issued for this request") from exc
    if not asked.empty and asked != filters:
        raise _invalid("the filters differ from those of the request that produced it")
    return filters, position
