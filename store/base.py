"""The one async storage interface (medallion's backend seam, without HTTP concerns or paging state).

Error tree::

    StoreError                 anything the store refuses or cannot do
    ├── NotFound               the record does not exist
    ├── Conflict               a uniqueness rule would break (duplicate e-mail, key name)
    ├── QuotaExceeded          a per-user limit would be passed (API keys per tier)
    └── StoreUnavailable       the database cannot be reached

Both backends (``store.sqlite``, ``store.mongo``) implement every method with the same behaviour;
``tests/conformance`` runs one suite on each.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import orjson

from store.csvform import csv_line
from store.query import ArticleQuery, IocQuery
from store.records import ApiKey, Article, Ioc, Session, Source, User, parse_stored
from store.usage import UsageHistory

# (sort value, id) of a row in its query's order: the keyset position cursors carry.
Position = tuple[Any, str]
ArticleRow = tuple[Position, bytes]


Q = TypeVar("Q", ArticleQuery, IocQuery)
T = TypeVar("T")


async def keyset_pages(query: Q, batch_size: int, fetch: Callable[[Q, int], Awaitable[list[T]]],
                       after: Callable[[T], Any]) -> AsyncIterator[list[T]]:
    """Pages of ``query`` by keyset (``after`` = the last row's position), ``query.limit`` rows at most.

    Both backends page this way: only the query's own offset is ever skipped, never earlier pages. While
    the caller writes one batch, the next is already being read (the database works while the
    socket drains); a batch shorter than asked for was the last.
    """
    # The first batch is a fifth of the others: the caller starts writing sooner, and the larger reads
    # that follow overlap its writes; only the first read is waited for with nothing to send.
    size = min(max(1, batch_size // 5), query.limit)
    if size <= 0:
        return
    batch = await fetch(query, size)
    remaining, ahead = query.limit, None
    try:
        while batch:
            remaining -= len(batch)
            if remaining > 0 and len(batch) == size:
                q = dataclasses.replace(query, after=after(batch[-1]), offset=0)
                size = min(batch_size, remaining)
                ahead = asyncio.ensure_future(fetch(q, size))
            yield batch
            if ahead is None:
                return
            batch, ahead = await ahead, None
    finally:
        if ahead is not None:  # the caller stopped early: drop the read ahead, and any error it met
            ahead.cancel()
            if ahead.done() and not ahead.cancelled():
                ahead.exception()


def ioc_row_position(encoded: bytes) -> tuple[datetime, str, str]:
    """The keyset position (``IocQuery.after``) of an IOC's encoded API form: read from a batch's last row
    only, so no other row carries its position out of the database."""
    api = orjson.loads(encoded)
    return parse_stored(api["first_seen"]), api["type"], api["value"]


class StoreError(Exception):
    """Base of every storage error."""


class NotFound(StoreError):
    """The record does not exist."""


class Conflict(StoreError):
    """A uniqueness rule would break."""


class QuotaExceeded(StoreError):
    """A per-user quota (API keys) would be exceeded."""


class StoreUnavailable(StoreError):
    """The database cannot be reached."""


@dataclass(frozen=True, slots=True)
class IocStats:
    """Totals for GET /api/v1/iocs/stats over one window."""

    total: int
    by_type: dict[str, int]
    by_confidence: dict[str, int]
    by_category: dict[str, int]
    top_sources: list[tuple[str, int]]
    # Records per UTC hour of ``modified`` ("YYYY-MM-DDTHH"): the same records as ``total``, so any series
    # summed from it adds up to the total, the window's partial first day and hour included.
    hourly: list[tuple[str, int]] = field(default_factory=list)


class Store(UsageHistory, abc.ABC):
    """Async storage of articles, IOCs, sources, users and API keys (and their usage history, ``store.usage``)."""

    name: str = "abstract"

    # -- lifecycle ---------------------------------------------------------------------------
    @abc.abstractmethod
    async def open(self) -> None:
        """Connect and create tables or indexes (idempotent)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release connections."""

    @abc.abstractmethod
    async def ping(self) -> dict[str, Any]:
        """Health facts for /healthz; raises StoreUnavailable when the database does not answer."""

    # -- data version ------------------------------------------------------------------------
    @abc.abstractmethod
    async def data_version(self) -> int:
        """A counter that every write of articles or IOCs increases."""

    # -- users and keys ----------------------------------------------------------------------
    @abc.abstractmethod
    async def create_user(self, user: User) -> User:
        """Insert a user; Conflict when the e-mail exists."""

    @abc.abstractmethod
    async def get_user(self, *, user_id: str | None = None, email: str | None = None) -> User:
        """One user by id or e-mail; NotFound otherwise."""

    @abc.abstractmethod
    async def create_key(self, key: ApiKey, max_keys: int) -> ApiKey:
        """Insert a key; QuotaExceeded past ``max_keys`` for its user, Conflict on a duplicate name."""

    @abc.abstractmethod
    async def key_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key (active or not) whose hash, or former hash (``previous_hash``), is ``key_hash``, or None."""

    async def key_with_user(self, key_hash: str) -> tuple[ApiKey, User] | None:
        """The key whose hash is ``key_hash`` and its owner, or None: what authenticating a request reads.

        Backends may answer in one read and share the records between requests: treat them as read-only.
        """
        key = await self.key_by_hash(key_hash)
        return None if key is None else (key, await self.get_user(user_id=key.user_id))

    @abc.abstractmethod
    async def list_keys(self, user_id: str) -> list[ApiKey]:
        """A user's keys, oldest first."""

    @abc.abstractmethod
    async def delete_key(self, user_id: str, name: str) -> None:
        """Delete by name; NotFound when there is none. Remembers the hash as revoked."""

    @abc.abstractmethod
    async def set_key_active(self, user_id: str, name: str, active: bool) -> None:
        """Activate or deactivate by name; NotFound when there is none. Activating ends ``pending``."""

    @abc.abstractmethod
    async def is_revoked(self, key_hash: str) -> bool:
        """True when a key with this hash existed and was deleted (answers expired_api_key)."""

    # -- articles ----------------------------------------------------------------------------

    # -- the account web: users, sessions, failed sign-ins ---------------------------
    @abc.abstractmethod
    async def list_users(self) -> list[User]:
        """Every user, by e-mail."""

    @abc.abstractmethod
    async def update_user(self, user: User) -> None:
        """Store ``user``'s tier and password hash; NotFound for an unknown id."""

    @abc.abstractmethod
    async def delete_user(self, user_id: str) -> None:
        """Delete the user, its keys (revoked first: they answer ``expired_api_key``) and its sessions."""

    @abc.abstractmethod
    async def touch_key(self, key_id: str, at: datetime) -> None:
        """Record when the key was last used (the account web's usage page shows it)."""

    @abc.abstractmethod
    async def set_key_scopes(self, user_id: str, name: str, scopes: list[str]) -> None:
        """Replace the scopes of one key (a downgrade trims them); NotFound for an unknown name."""

    @abc.abstractmethod
    async def rotate_key(self, user_id: str, name: str, key_hash: str, prefix: str,
                         previous_expires_at: datetime) -> ApiKey:
        """A new secret for one key: ``key_hash`` and ``prefix`` replace the key's, whose hash becomes
        ``previous_hash`` until ``previous_expires_at``; the key turns ``pending`` (the new secret works once
        delivered). A former hash still kept is revoked. The updated key; NotFound for an unknown name."""

    @abc.abstractmethod
    async def rename_key(self, user_id: str, name: str, new_name: str) -> None:
        """Rename one key; NotFound for an unknown name, Conflict when ``new_name`` is taken."""

    @abc.abstractmethod
    async def create_session(self, session: Session) -> None:
        """Store a session (its id is the SHA-256 of the cookie value)."""

    @abc.abstractmethod
    async def session_with_user(self, session_id: str) -> tuple[Session, User] | None:
        """The session and its user, in one read (every page asks)."""

    @abc.abstractmethod
    async def touch_session(self, session_id: str, at: datetime) -> None:
        """Record activity (the idle expiry counts from it)."""

    @abc.abstractmethod
    async def delete_sessions(self, *, session_id: str | None = None, user_id: str | None = None) -> int:
        """End one session, or every session of a user; the number ended."""

    @abc.abstractmethod
    async def reserve_attempt(self, limits: Sequence[tuple[str, int]], since: datetime, at: datetime
                              ) -> datetime | None:
        """Count one attempt at ``at`` for every ``(subject, limit)`` (an account, a client address, all
        sign-ups) only if each subject has fewer than ``limit`` attempts after ``since``: None then. Else
        count nothing and return the newest of the full subjects' ``limit``-th newest attempts (the
        subject is free again when that one leaves the window). Atomic across every process on the store,
        so at most ``limit`` attempts are ever let through: the throttle counts before the work."""

    @abc.abstractmethod
    async def clear_attempts(self, subject: str) -> None:
        """Forget ``subject``'s attempts (an account after its right password)."""

    @abc.abstractmethod
    async def save_token(self, token_hash: str, purpose: str, user_id: str, expires_at: datetime) -> None:
        """Keep the SHA-256 of a link mailed to ``user_id`` for ``purpose`` (``reset``, ``verify``) until
        ``expires_at``; deleted with the user."""

    @abc.abstractmethod
    async def take_token(self, token_hash: str, purpose: str, now: datetime) -> str | None:
        """Use a mailed link once: atomically delete it and every other ``purpose`` token of its user; the
        user's id when it existed and had not expired at ``now``, else None."""

    @abc.abstractmethod
    async def upsert_articles(self, articles: Sequence[Article]) -> int:
        """Insert or replace by id; returns how many rows changed. Bumps the data version."""

    @abc.abstractmethod
    async def get_article(self, article_id: str) -> Article:
        """One article by id; NotFound otherwise."""

    @abc.abstractmethod
    async def find_article(self, *, canonical_url: str | None = None,
                           content_hash: str | None = None) -> Article | None:
        """The article with this canonical URL or content hash, for de-duplication."""

    @abc.abstractmethod
    def iter_articles(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[Article]]:
        """Rows matching ``query`` in its sort order, ``query.limit`` at most, in batches."""

    async def iter_article_rows(self, query: ArticleQuery, batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        """Like ``iter_articles``, as (keyset position, list form encoded as JSON) pairs: exports stream the
        bytes without decoding records. Backends that keep the encoding precomputed override this."""
        async for batch in self.iter_articles(query, batch_size):
            yield [((getattr(a, query.sort_field), a.id), orjson.dumps(a.list_form())) for a in batch]

    async def iter_article_csv_rows(self, query: ArticleQuery,
                                    batch_size: int = 500) -> AsyncIterator[list[ArticleRow]]:
        """Like ``iter_article_rows``, with each row's CSV line (``store.csvform``, every column) as its bytes."""
        async for batch in self.iter_article_rows(query, batch_size):
            yield [(position, csv_line(orjson.loads(encoded))) for position, encoded in batch]

    @abc.abstractmethod
    async def count_articles(self, query: ArticleQuery, exact: bool) -> int:
        """Exact count, or a fast estimate when ``exact`` is False."""

    @abc.abstractmethod
    async def article_sources(self) -> list[tuple[str, str, int, int]]:
        """(source_name, source_type, source_tier, article count) for every source with articles."""

    async def article_refs(self, ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        """(title, url, source_name) of each existing article in ``ids``; backends may do it in one query."""
        refs: dict[str, tuple[str, str, str]] = {}
        for article_id in dict.fromkeys(ids):
            try:
                article = await self.get_article(article_id)
            except NotFound:
                continue
            refs[article_id] = (article.title, article.url, article.source_name)
        return refs

    # -- IOCs --------------------------------------------------------------------------------
    @abc.abstractmethod
    async def upsert_iocs(self, iocs: Iterable[Ioc]) -> int:
        """Insert or merge by (type, value); first_seen never moves later. Bumps the data version."""

    @abc.abstractmethod
    async def replace_iocs(self, iocs: Iterable[Ioc]) -> int:
        """Make these the only records (a re-enrichment recomputes every record from the articles, so a
        value no article presents any more disappears). Bumps the data version."""

    @abc.abstractmethod
    def iter_iocs(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[Ioc]]:
        """Records matching ``query`` ordered by (first_seen, type, value), ``query.limit`` at most."""

    async def iter_ioc_rows(self, query: IocQuery, batch_size: int = 1000) -> AsyncIterator[list[bytes]]:
        """Like ``iter_iocs``, as API forms encoded as JSON: the list and search pages stream the bytes
        without decoding records. Backends that keep the encoding stored override this."""
        async for batch in self.iter_iocs(query, batch_size):
            yield [orjson.dumps(i.to_api()) for i in batch]

    @abc.abstractmethod
    async def count_iocs(self, query: IocQuery) -> int:
        """How many records match ``query`` (offset and limit ignored)."""

    @abc.abstractmethod
    async def get_ioc(self, ioc_type: str, value: str) -> Ioc | None:
        """One record, or None."""

    @abc.abstractmethod
    async def ioc_stats(self, since: datetime, top: int = 10) -> IocStats:
        """Totals of records modified since ``since``, with an hourly series of those records."""

    # -- sources -----------------------------------------------------------------------------
    @abc.abstractmethod
    async def upsert_source(self, source: Source) -> None:
        """Insert or replace a source and its health by name."""

    @abc.abstractmethod
    async def list_sources(self) -> list[Source]:
        """Every configured source, by name."""

    # -- helpers shared by both backends -----------------------------------------------------
    async def all_articles(self, query: ArticleQuery) -> list[Article]:
        """Every row of ``query`` in one list (for tests and small pages)."""
        rows: list[Article] = []
        async for batch in self.iter_articles(query):
            rows.extend(batch)
        return rows

    async def all_iocs(self, query: IocQuery) -> list[Ioc]:
        """Every record of ``query`` in one list."""
        rows: list[Ioc] = []
        async for batch in self.iter_iocs(query):
            rows.extend(batch)
        return rows
