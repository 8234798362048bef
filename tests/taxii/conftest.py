"""Fixtures for the TAXII tests: IOC records of every type, a Bearer auth for taxii2-client, a validator."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import requests
from stix2validator import ValidationOptions, validate_instance

from store.records import IOC_TYPES, Ioc, utcnow
from taxii.media import TAXII_21


class BearerAuth(requests.auth.AuthBase):
    """A ctiwire key in ``Authorization: Bearer`` for taxii2-client (which sends Basic with ``user``/``password``)."""

    def __init__(self, key: str) -> None:
        self.key = key

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.key}"
        return request


def ioc_value(kind: str, n: int) -> str:
    """A distinct, well-formed value of ``kind`` for each ``n``."""
    return {
        "ipv4": f"10.{n // 65536 % 256}.{n // 256 % 256}.{n % 256}",
        "ipv6": f"2001:db8::{n // 65536:x}:{n % 65536:x}",
        "domain": f"c2-{n}.bad-host.example",
        "url": f"http://c2-{n}.bad-host.example/gate.php?id={n}&q='x'",
        "md5": f"{n:032x}",
        "sha1": f"{n:040x}",
        "sha256": f"{n:064x}",
        "sha512": f"{n:0128x}",
        "email": f"phish{n}@bad-host.example",
        "cve": f"CVE-2024-{10000 + n}",
        "mitre-attack": f"T{1000 + n % 9000}.{n // 9000:03d}",
    }[kind]


def make_iocs(count: int, start: int = 0, first: datetime | None = None, step: timedelta = timedelta(seconds=1),
              kinds: tuple[str, ...] = IOC_TYPES, **extra: Any) -> list[Ioc]:
    """``count`` records cycling through ``kinds``, first seen ``step`` apart from ``first`` onwards."""
    base = first or utcnow() - timedelta(days=2)
    rows = []
    for i in range(start, start + count):
        kind = kinds[i % len(kinds)]
        seen = base + step * (i - start)
        rows.append(Ioc(kind, ioc_value(kind, i), ("high", "medium", "low")[i % 3], f"Feed {i % 7}",
                        ("government", "commercial", "community")[i % 3], seen, seen, seen + timedelta(minutes=5),
                        sources=[f"Feed {i % 7}"], industries=["finance"] if i % 2 else [], **extra))
    return rows


STRICT = ValidationOptions(strict=True, disabled="uuid-check,extref-hashes")


def assert_valid_stix(objects: list[dict[str, Any]]) -> None:
    """stix2-validator 3.2.0, strict; uuid-check is off because ids are deliberately UUIDv5 (STIX 2.1 s. 2.9)
    and extref-hashes because article links carry no hashes."""
    for obj in objects:
        result = validate_instance(obj, STRICT)
        assert result.is_valid, (obj, [str(e) for e in result.errors], [str(w) for w in result.warnings])


def assert_taxii_error(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    """TAXII 2.1 section 3.6.1, plus this server's promises: request id in details, TAXII media type."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == TAXII_21
    body = response.json()
    assert set(body) == {"title", "description", "error_id", "error_code", "http_status", "details"}
    assert body["http_status"] == str(status) and body["error_code"] == code
    assert body["details"]["request_id"] == response.headers["X-Request-Id"] == body["error_id"]
    assert body["title"] and body["description"]
    return body


@pytest.fixture
def iocs() -> Callable[..., list[Ioc]]:
    return make_iocs


@pytest.fixture
def bearer() -> type[BearerAuth]:
    return BearerAuth


@pytest.fixture
def stix_valid() -> Callable[[list[dict[str, Any]]], None]:
    return assert_valid_stix


@pytest.fixture
def taxii_http(server: Any) -> Callable[..., httpx.AsyncClient]:
    """An httpx client on the running server sending the TAXII Accept (or ``accept``) and a Bearer key."""

    def make(key: str | None = None, accept: str | None = TAXII_21, **headers: str) -> httpx.AsyncClient:
        client = httpx.AsyncClient(base_url=server.url, timeout=60, headers=headers)
        if key:
            client.headers["Authorization"] = f"Bearer {key}"
        if accept is None:
            del client.headers["Accept"]
        else:
            client.headers["Accept"] = accept
        return client

    return make
