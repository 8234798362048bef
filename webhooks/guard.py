"""Server-side request forgery: a webhook URL must reach the public internet only.

A URL is refused when it is not http(s), or when any address its host resolves to is not globally
routable (loopback, RFC 1918 private, link-local with the cloud metadata address 169.254.169.254,
carrier-grade NAT, unique-local IPv6, multicast, unspecified; Python's ``ipaddress.is_global`` per the
IANA special-purpose registries, RFC 6890). It is checked at creation and again before every delivery,
since a name may be re-pointed after it was accepted. ``allow_private`` (CTIWIRE_WEBHOOK_ALLOW_PRIVATE)
lifts the address rule for tests and for receivers on one's own network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048


class UnsafeUrl(ValueError):
    """The URL may not receive webhooks; the message says why."""


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 scope id (fe80::1%eth0) is not part of it
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:127.0.0.1 reaches 127.0.0.1
    return address


def check_form(url: str) -> tuple[str, int]:
    """The host and port of an http(s) URL with a host; UnsafeUrl otherwise."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeUrl(f"the URL is longer than {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeUrl("only http:// and https:// URLs with a host can receive webhooks")
    if parts.username or parts.password:
        raise UnsafeUrl("credentials in the URL are not accepted; authenticate deliveries by their signature")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise UnsafeUrl(f"the URL's port is not a number: {exc}") from None
    return parts.hostname, port


async def resolve(host: str, port: int) -> list[str]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UnsafeUrl(f"the host {host!r} does not resolve ({exc})") from None
    return sorted({str(info[4][0]) for info in infos})


async def check_url(url: str, allow_private: bool) -> None:
    """Raise UnsafeUrl unless ``url`` is http(s) and (without ``allow_private``) every address of its host
    is globally routable."""
    host, port = check_form(url)
    if allow_private:
        return
    for text in await resolve(host, port):
        address = _address(text)
        if not address.is_global or address.is_multicast:
            raise UnsafeUrl(
                f"the host {host!r} resolves to {address}, a loopback, private, link-local or metadata address"
            )
