"""Webhook URLs that would reach the service's own network are refused (unless private addresses are
allowed); only http(s) URLs with a host, without credentials."""

from __future__ import annotations

import pytest

from webhooks.guard import UnsafeUrl, check_url

PRIVATE = [
    "http://127.0.0.1/hook",
    "http://127.9.9.9:8080/",
    "http://169.254.169.254/latest/meta-data/",  # the cloud metadata address
    "http://10.1.2.3/",
    "http://192.168.0.10/",
    "http://172.16.5.4/",
    "http://100.100.100.200/",  # carrier-grade NAT space (a metadata address on one cloud)
    "http://[::1]/",
    "http://[fd00:ec2::254]/",  # unique-local IPv6 (a metadata address on one cloud)
    "http://[::ffff:127.0.0.1]/",
    "http://0.0.0.0/",
    "http://localhost/",  # a host name that resolves to loopback
]


@pytest.mark.parametrize("url", PRIVATE)
async def test_private_addresses_are_refused(url: str) -> None:
    with pytest.raises(UnsafeUrl, match="loopback, private, link-local or metadata"):
        await check_url(url, allow_private=False)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "http://localhost/", "http://10.0.0.1/"])
async def test_allowed_when_private_addresses_are(url: str) -> None:
    await check_url(url, allow_private=True)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://93.184.216.34/",
        "file:///etc/passwd",
        "gopher://127.0.0.1/",
        "//93.184.216.34/",
        "http:///x",
        "https://user:pw@93.184.216.34/",
        "http://93.184.216.34:99999/",
    ],
)
async def test_other_forms_are_refused_even_when_private_is_allowed(url: str) -> None:
    with pytest.raises(UnsafeUrl):
        await check_url(url, allow_private=True)


async def test_a_public_address_is_accepted() -> None:
    await check_url("https://93.184.216.34/hooks/ctiwire", allow_private=False)
    await check_url("http://[2606:2800:220:1:248:1893:25c8:1946]:8443/", allow_private=False)
