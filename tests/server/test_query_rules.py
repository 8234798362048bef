"""One reading rule for every known query parameter (server.params.single_value), as the OpenAPI
description states it: given twice (in either order), empty, blank or holding a control character is a
400 naming the parameter; unknown parameters stay ignored; parameters that exclude each other are 400
conflicting_parameters, each documented in the description."""

from __future__ import annotations

import re
from typing import Any

import pytest

TAXII_ACCEPT = {"Accept": "application/taxii+json;version=2.1"}
OBJECTS = "/api/taxii2/api/collections/all-iocs/objects/"


@pytest.mark.parametrize(("path", "query", "name"), [
    ("/api/v1/articles", "limit=abc&limit=3", "limit"),
    ("/api/v1/articles", "limit=3&limit=abc", "limit"),
    ("/api/v1/articles", "limit=3&limit=3", "limit"),
    ("/api/v1/iocs", "type=ipv4&type=domain", "type"),
    ("/api/v1/articles", "has_ai_summary=", "has_ai_summary"),
    ("/api/v1/articles", "source=%20%20", "source"),
    ("/api/v1/iocs/stix", "window=%1F", "window"),
    ("/api/v1/iocs/stix", "window=7d%00", "window"),
    ("/api/v1/lookup", "value=evil.example%0A", "value"),
    ("/api/v1/iocs/search", "q=", "q"),
])
async def test_a_repeated_empty_or_control_character_parameter_is_400_naming_it(server, path: str, query: str,
                                                                                name: str) -> None:
    async with server.client(server.pro_key) as http:
        answer = await http.get(f"{path}?{query}")
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["code"] == "invalid_parameter" and error["details"]["parameter"] == name
    assert error["request_id"].startswith("req_")


@pytest.mark.parametrize(("query", "name"), [
    ("limit=2&limit=abc", "limit"), ("limit=abc&limit=2", "limit"), ("next=", "next"),
    ("added_after=", "added_after"), ("match%5Btype%5D=", "match[type]"),
])
async def test_taxii_applies_the_same_rule(server, query: str, name: str) -> None:
    async with server.client(server.pro_key) as http:
        answer = await http.get(f"{OBJECTS}?{query}", headers=TAXII_ACCEPT)
    assert answer.status_code == 400, answer.text
    assert answer.json()["details"]["parameter"] == name


async def test_taxii_match_filters_may_be_repeated_as_documented(server) -> None:
    async with server.client(server.pro_key) as http:
        repeated = await http.get(f"{OBJECTS}?match%5Btype%5D=indicator&match%5Btype%5D=vulnerability",
                                  headers=TAXII_ACCEPT)
        listed = await http.get(f"{OBJECTS}?match%5Btype%5D=indicator,vulnerability", headers=TAXII_ACCEPT)
    assert repeated.status_code == 200 and repeated.json() == listed.json()


async def test_unknown_parameters_stay_ignored_even_repeated_or_empty(server) -> None:
    async with server.client(server.pro_key) as http:
        plain = await http.get("/api/v1/iocs", params={"limit": "5"})
        noisy = await http.get("/api/v1/iocs?limit=5&foo=&foo=1&bar=%1F")
    assert noisy.status_code == 200 and noisy.json()["data"] == plain.json()["data"]


@pytest.mark.parametrize(("path", "params", "names"), [
    ("/api/v1/iocs/stix", {"window": "7d", "since": "2026-01-01T00:00:00Z"}, ["window", "since"]),
    ("/api/v1/articles", {"time_field": "published_at", "modified_since": "2026-01-01T00:00:00Z"},
     ["modified_since", "time_field"]),
])
async def test_conflicts_are_400_and_documented(server, path: str, params: dict[str, str], names: list[str]) -> None:
    async with server.client(server.pro_key) as http:
        answer = await http.get(path, params=params)
        document = (await http.get("/api/openapi.json")).json()
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "conflicting_parameters"
    assert sorted(answer.json()["error"]["details"]["parameters"]) == sorted(names)
    operation = document["paths"][path]["get"]
    assert "conflicting_parameters" in operation["responses"]["400"]["description"]
    described = {p["name"]: p["description"] for p in operation["parameters"]}
    first, second = names
    assert f"`{second}`" in described[first] or f"`{first}`" in described[second]


async def test_the_description_states_the_rule_and_refuses_what_the_server_refuses(server) -> None:
    async with server.client() as http:
        document = (await http.get("/api/openapi.json")).json()
    assert "given twice" in document["info"]["description"] and "empty or blank" in document["info"]["description"]
    for path, item in document["paths"].items():
        for parameter in item.get("get", {}).get("parameters", []):
            if parameter["in"] == "query" and parameter["schema"].get("type") == "string":
                assert _refuses_blank(parameter["schema"]), (path, parameter["name"])


def _refuses_blank(schema: dict[str, Any]) -> bool:
    if "enum" in schema:
        return "" not in schema["enum"]
    if "pattern" in schema:
        return not any(re.search(schema["pattern"], v) for v in ("", " ", "\x1f"))
    return schema.get("format") == "date-time"


def test_single_value_reads_exactly_what_was_sent() -> None:
    from server.params import single_value

    assert single_value({"a": [b" 7d "]}, "a") == " 7d "
    assert single_value({}, "a") is None
