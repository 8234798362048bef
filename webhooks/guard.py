"""Server-side request forgery: a webhook URL must reach the public internet only.

A URL is refused when it is not http(s), or when any address its host resolves to is not globally
routable (loopback, RFC 1918 private, link-local with the cloud metadata address 169.254.169.254,
carrier-grade NAT, unique-local IPv6, multicast, unspecified; Python's ``ipaddress.is_global`` per the
IANA special-purpose registries, RFC 6890). It is checked at creation and again at every delivery's
connection: ``GuardedBackend`` resolves the name itself and connects to the address it checked, so a name
re-pointed after the check (DNS rebinding) cannot lead the connection elsewhere. ``allow_private``
(CTIWIRE_WEBHOOK_ALLOW_PRIVATE) lifts the address rule for tests and for receivers on one's own network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import httpcore

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


def _refuse_private(host: str, addresses: list[str]) -> None:
    for text in addresses:
        address = _address(text)
        if not address.is_global or address.is_multicast:
            raise UnsafeUrl(
                f"the host {host!r} resolves to {address}, a loopback, private, link-local or metadata address"
            )


async def check_url(url: str, allow_private: bool) -> None:
    """Raise UnsafeUrl unless ``url`` is http(s) and (without ``allow_private``) every address of its host
    is globally routable."""
    host, port = check_form(url)
    if allow_private:
        return
    _refuse_private(host, await resolve(host, port))


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, connecting only to addresses the guard allows: the address checked is
    the address connected to (TLS still names the URL's host: httpcore passes it for SNI and the certificate)."""

    def __init__(self, allow_private: bool) -> None:
        self._inner = httpcore.AnyIOBackend()
        self._allow_private = allow_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = await resolve(host, port)
        if not self._allow_private:
            _refuse_private(host, addresses)
        return await self._inner.connect_tcp(addresses[0], port, timeout, local_address, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
    ) -> httpcore.AsyncNetworkStream:
        raise UnsafeUrl("webhooks are delivered over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
