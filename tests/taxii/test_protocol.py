"""The pure parts of the TAXII server: content negotiation, filter parsing, next tokens, matching."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import orjson
import pytest

from server.errors import BadRequest
from store.records import IOC_TYPES
from taxii.filters import OBJECT_FIELDS, Filters, Matcher, parse_filters, parse_limit, store_types
from taxii.media import accepts_taxii21, parse_timestamp, taxii_time
from taxii.next_tokens import Position, make_token, resume, scope

SECRET = "s" * 40


def q(**values: str | list[str]) -> dict[str, list[bytes]]:
    """A Tornado-style query_arguments mapping; keys use __ for brackets: match__id -> match[id]."""
    out: dict[str, list[bytes]] = {}
    for key, value in values.items():
        name = key.replace("__", "[", 1) + "]" if "__" in key else key
        out[name] = [v.encode() for v in ([value] if isinstance(value, str) else value)]
    return out


@pytest.mark.parametrize(("accept", "ok"), [
    ("application/taxii+json;version=2.1", True),
    ("application/taxii+json; version=2.1", True),
    ('Application/TAXII+JSON; Version="2.1"', True),
    ("application/taxii+json", True),
    ("application/json, application/taxii+json;version=2.1;q=0.5", True),
    ("application/taxii+json;version=2.1;q=0", False),
    ("application/taxii+json;version=2.0", False),
    ("application/vnd.oasis.taxii+json; version=2.0", False),
    ("application/stix+json;version=2.1", False),
    ("application/json", True),
    ("application/json;q=0", False),
    ("*/*", True),
    ("application/*", True),
    ("text/*", False),
    ("application/taxii+json;q=0, */*", False),
    ("application/taxii+json;version=2.0, application/*;q=0.1", True),
    ("", True),
    (None, True),
])
def test_accept_must_not_exclude_the_taxii21_media_type(accept: str | None, ok: bool) -> None:
    assert accepts_taxii21(accept) is ok


def test_taxii_timestamps_have_microseconds() -> None:
    when = datetime(2026, 1, 2, 3, 4, 5, 120000, tzinfo=UTC)
    assert taxii_time(when) == "2026-01-02T03:04:05.120000Z"
    assert parse_timestamp("2026-01-02T04:04:05.12+01:00") == when
    for bad in ("2026-01-02", "2026-01-02T03:04:05", "yesterday"):
        with pytest.raises(ValueError):
            parse_timestamp(bad)


def test_filter_values_are_merged_sorted_and_ored() -> None:
    a = "indicator--" + "a" * 8 + "-aaaa-5aaa-8aaa-" + "a" * 12
    b = "vulnerability--" + "b" * 8 + "-bbbb-5bbb-8bbb-" + "b" * 12
    filters = parse_filters(q(match__id=[f"{b},{a}", a], match__type="vulnerability, indicator",
                              match__version="LAST,2026-01-01T00:00:00Z", added_after="2026-01-01T00:00:00.0005Z"))
    assert filters.ids == (a, b) and filters.types == ("indicator", "vulnerability")
    assert filters.versions == ("2026-01-01T00:00:00.000000Z", "last")
    assert filters.added_after == datetime(2026, 1, 1, tzinfo=UTC)  # exact: date_added is in milliseconds
    both = parse_filters(q(match__type="indicator,vulnerability"))
    assert both == parse_filters(q(match__type=["vulnerability", "indicator"]))
    assert parse_filters({}).empty and parse_filters(q(limit="5", next="t")).empty


@pytest.mark.parametrize(("args", "parameter"), [
    (q(added_after="yesterday"), "added_after"),
    (q(added_after=["2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"]), "added_after"),
    (q(match__id="indicator--not-a-uuid"), "match[id]"),
    (q(match__type="Indicator"), "match[type]"),
    (q(match__version="newest"), "match[version]"),
    (q(match__spec_version="two"), "match[spec_version]"),
    (q(match__color="red"), "match[color]"),
])
def test_malformed_filters_are_400_naming_the_parameter(args: dict[str, list[bytes]], parameter: str) -> None:
    with pytest.raises(BadRequest) as caught:
        parse_filters(args)
    assert caught.value.details == {"parameter": parameter}


def test_object_endpoint_takes_only_version_filters() -> None:
    assert parse_filters(q(match__version="all"), OBJECT_FIELDS).versions == ("all",)
    with pytest.raises(BadRequest):
        parse_filters(q(match__type="indicator"), OBJECT_FIELDS)


def test_limit_is_clamped_to_one_and_the_maximum() -> None:
    assert parse_limit({}, 1000, 10_000) == 1000
    assert parse_limit(q(limit="25"), 1000, 10_000) == 25
    assert parse_limit(q(limit="50000"), 1000, 10_000) == 10_000
    assert parse_limit(q(limit="0"), 1000, 10_000) == parse_limit(q(limit="-3"), 1000, 10_000) == 1
    for bad in ("ten", "1.5", str(2**31)):
        with pytest.raises(BadRequest):
            parse_limit(q(limit=bad), 1000, 10_000)


def test_types_push_down_to_the_store() -> None:
    collection = ("ipv4", "domain", "cve")
    assert store_types(collection, Filters()) == collection
    assert store_types(IOC_TYPES, Filters()) is None  # every type: no clause, the date index is walked
    assert store_types(IOC_TYPES, Filters(types=("vulnerability",))) == ("cve",)
    assert store_types(collection, Filters(types=("vulnerability",))) == ("cve",)
    assert store_types(collection, Filters(types=("malware",))) == ()
    vuln_id = "vulnerability--" + "b" * 8 + "-bbbb-5bbb-8bbb-" + "b" * 12
    assert store_types(collection, Filters(types=("indicator",), ids=(vuln_id,))) == ()
    assert Filters(spec_versions=("2.0",)).serves_nothing()
    assert not Filters(spec_versions=("2.0", "2.1")).serves_nothing()


def test_matcher_decides_ids_and_version_timestamps() -> None:
    obj = {"id": "indicator--x", "type": "indicator", "modified": "2026-01-01T00:00:00.250Z"}
    assert Matcher(Filters())(obj) and not Matcher(Filters()).narrows
    assert Matcher(Filters(versions=("2026-01-01T00:00:00.250000Z",)))(obj)
    assert not Matcher(Filters(versions=("2026-01-01T00:00:00.000000Z",)))(obj)
    assert Matcher(Filters(versions=("2026-01-01T00:00:00.000000Z", "first")))(obj)  # ORed: first selects it
    assert not Matcher(Filters(ids=("indicator--y",)))(obj)
    assert not Matcher(Filters(ids=("indicator--y",))).narrows  # the store filters ids (IocQuery.stix_ids)
    assert Matcher(Filters(versions=("2026-01-01T00:00:00.000000Z",))).narrows


def _token(filters: Filters, where: str = "") -> str:
    position = Position(datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC), "url", "http://x.example/a'b")
    return make_token(SECRET, where or scope("objects", "all-iocs"), filters, position)


def test_token_round_trip_with_or_without_repeated_filters() -> None:
    filters = Filters(added_after=datetime(2026, 1, 1, tzinfo=UTC), types=("indicator",))
    token = _token(filters)
    for asked in (filters, Filters()):
        got, position = resume(SECRET, token, scope("objects", "all-iocs"), asked)
        assert got == filters
        assert position.key() == (datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC), "url", "http://x.example/a'b")


def _flip(token: str) -> str:
    body, _, mac = token.partition(".")
    payload = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["p"]["p"][2] = "http://y.example/"
    forged = base64.urlsafe_b64encode(orjson.dumps(payload)).rstrip(b"=").decode()
    return f"{forged}.{mac}"


@pytest.mark.parametrize("case", ["forged position", "bad mac", "garbage", "other collection", "other endpoint",
                                  "other filters", "other secret"])
def test_tampered_or_mismatched_tokens_are_400(case: str) -> None:
    token = _token(Filters(types=("indicator",)))
    where, asked, secret = scope("objects", "all-iocs"), Filters(), SECRET
    if case == "forged position":
        token = _flip(token)
    elif case == "bad mac":
        token = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    elif case == "garbage":
        token = "not a token"
    elif case == "other collection":
        where = scope("objects", "cves")
    elif case == "other endpoint":
        where = scope("manifest", "all-iocs")
    elif case == "other filters":
        asked = Filters(types=("vulnerability",))
    else:
        secret = "t" * 40
    with pytest.raises(BadRequest) as caught:
        resume(secret, token, where, asked)
    assert caught.value.code == "invalid_next" and caught.value.details == {"parameter": "next"}
