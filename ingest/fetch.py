"""Polite HTTP fetching for collection.

Conditional requests (ETag / If-Modified-Since), timeouts, a body-size cap enforced while streaming,
a bounded number of redirects, retries with exponential backoff on transient failures, one request
at a time per host, and an identifying User-Agent.

Error tree::

    FetchError              the resource could not be fetched (the message says why)
    ├── TooLarge            the body exceeded the size cap
    └── HttpStatusError     a final non-2xx/304 status (after retries for 5xx and 429)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

USER_AGENT = "ctiwire/1.0 (+https://github.com/ctiwire/ctiwire; threat-intel news collector)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class FetchError(Exception):
    """The resource could not be fetched."""


class TooLarge(FetchError):
    """The body exceeded the configured size cap."""


class HttpStatusError(FetchError):
    """The server answered with a final error status."""

    def __init__(self, status: int, url: str) -> None:
        super().__init__(f"HTTP {status} from {url}")
        self.status = status


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """Bounds of one fetch; tests shrink them."""

    timeout: float = 20.0
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 5
    retries: int = 2
    backoff: float = 1.0


@dataclass(frozen=True, slots=True)
class Fetched:
    """A fetched body, or ``not_modified`` for a 304; validators to send next time."""

    url: str
    status: int
    body: bytes = b""
    content_type: str = ""
    etag: str | None = None
    last_modified: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.status == 304


@dataclass
class Fetcher:
    """One shared client; a lock per host keeps us to one request at a time per host."""

    limits: FetchLimits = field(default_factory=FetchLimits)
    _client: httpx.AsyncClient | None = None
    _hosts: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def __aenter__(self) -> Fetcher:
        self._client = httpx.AsyncClient(
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}, follow_redirects=True,
            max_redirects=self.limits.max_redirects, timeout=httpx.Timeout(self.limits.timeout))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()

    @contextlib.asynccontextmanager
    async def _host(self, url: str) -> AsyncIterator[None]:
        lock = self._hosts.setdefault(urlsplit(url).netloc.lower(), asyncio.Lock())
        async with lock:
            yield

    async def get(self, url: str, etag: str | None = None, last_modified: str | None = None) -> Fetched:
        """GET ``url`` politely; FetchError when it cannot be had after the retries."""
        headers = {k: v for k, v in (("If-None-Match", etag), ("If-Modified-Since", last_modified)) if v}
        for attempt in range(self.limits.retries + 1):
            try:
                async with self._host(url):
                    return await self._once(url, headers)
            except (httpx.HTTPError, HttpStatusError) as exc:
                if not _transient(exc) or attempt == self.limits.retries:
                    raise _as_fetch_error(exc, url) from exc
            await asyncio.sleep(self.limits.backoff * 2 ** attempt)
        raise FetchError(f"unreachable: {url}")  # pragma: no cover - the loop returns or raises

    async def _once(self, url: str, headers: dict[str, str]) -> Fetched:
        assert self._client is not None, "use Fetcher as an async context manager"
        async with self._client.stream("GET", url, headers=headers) as response:
            if response.status_code == 304:
                return Fetched(str(response.url), 304, etag=headers.get("If-None-Match"),
                               last_modified=headers.get("If-Modified-Since"))
            if not 200 <= response.status_code < 300:
                raise HttpStatusError(response.status_code, url)
            body = await _read_capped(response, self.limits.max_bytes)
            return Fetched(str(response.url), response.status_code, body, response.headers.get("Content-Type", ""),
                           response.headers.get("ETag"), response.headers.get("Last-Modified"))


async def _read_capped(response: httpx.Response, cap: int) -> bytes:
    declared = response.headers.get("Content-Length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise TooLarge(f"{response.url}: {declared} bytes exceeds the {cap}-byte cap")
    parts, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:  # a missing or lying Content-Length cannot get past the cap
            raise TooLarge(f"{response.url}: body exceeds the {cap}-byte cap")
        parts.append(chunk)
    return b"".join(parts)


def _transient(exc: Exception) -> bool:
    if isinstance(exc, HttpStatusError):
        return exc.status in RETRY_STATUSES
    return not isinstance(exc, httpx.TooManyRedirects)


def _as_fetch_error(exc: Exception, url: str) -> FetchError:
    if isinstance(exc, FetchError):
        return exc
    if isinstance(exc, httpx.TooManyRedirects):
        return FetchError(f"too many redirects from {url}")
    if isinstance(exc, httpx.TimeoutException):
        return FetchError(f"timed out fetching {url}")
    return FetchError(f"cannot fetch {url}: {type(exc).__name__}: {exc}")
