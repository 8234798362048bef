"""The exporter interface: one class per format behind one registry.

Modelled on pySigma's ``Backend`` (ARCHITECTURE.md, "Patterns"): class-level metadata (``format_id``,
``media_type``, ``extension``) and a single hook, ``encode``, that turns IOC records into bytes. Encoders
yield chunks (about 64 KiB, or one per record batch for line formats) so the server can stream them and
the workers can join them; they never talk to a store or a server, so they run anywhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import ClassVar, NamedTuple

from config.tiers import IOC_EXPORT_COST
from exporters.caps import ARTICLE_CANDIDATES, ARTICLES_PER_RECORD
from store import stixids
from store.ioctypes import skipped_note
from store.ports import ArticleStore
from store.records import Ioc, iso, ms
from store.stixids import stable_uuid as stable_uuid  # re-exported: formats name their ids through here

CHUNK_SIZE = 64 * 1024
_NO_DATE = datetime.min.replace(tzinfo=UTC)
PRODUCT = "ctiwire"


class ArticleRef(NamedTuple):
    """What an export says about a reporting article (the store's ``article_refs`` tuple, named)."""

    title: str
    url: str
    source_name: str
    published: datetime | None = None  # a STIX report's ``published``; None: not known to the caller


@dataclass(frozen=True, slots=True)
class ExportContext:
    """Everything an export states beside the IOCs: its clock, window, tier and the reporting articles."""

    generated_at: datetime
    since: datetime
    until: datetime
    tier: str
    articles: Mapping[str, ArticleRef]
    # The request's filters as (parameter, value) pairs, for the formats that state them in a header.
    filters: tuple[tuple[str, str], ...] = ()

    def cited(self, ioc: Ioc) -> list[str]:
        """Ids of the articles an export cites for ``ioc``: the most recently published of its first listed
        ones (exporters.caps), newest first (equal dates in the record's order); ids this context does not
        know are skipped."""
        known = [a for a in dict.fromkeys(candidate_articles(ioc)) if a in self.articles]
        known.sort(key=lambda a: self.articles[a].published or _NO_DATE, reverse=True)  # stable
        return known[:ARTICLES_PER_RECORD]

    def refs(self, ioc: Ioc) -> list[ArticleRef]:
        """The cited articles of ``ioc`` (:meth:`cited`)."""
        return [self.articles[a] for a in self.cited(ioc)]

    @property
    def range_text(self) -> str:
        """The covered window, as every format names it (MISP ``info``, rule descriptions...)."""
        return f"{iso(self.since)} to {iso(self.until)}"

    def header_lines(self, title: str, iocs: Sequence[Ioc], consumer: str, notes: Sequence[str] = ()) -> list[str]:
        """What a text format says in its comment header: what it is, when it was made, its window and
        filters, and which records it left out and why (the registry's reasons, then the format's own)."""
        filters = ", ".join(f"{name}={value}" for name, value in self.filters) or "none"
        return [f"{PRODUCT} {title}", f"generated {iso(self.generated_at)}",
                f"IOCs first seen or updated from {self.range_text} ({self.tier} tier)", f"filters: {filters}",
                *skipped_note((i.type for i in iocs), consumer), *notes]


def candidate_articles(ioc: Ioc) -> list[str]:
    """The article ids an export reads for ``ioc``: a bounded prefix of what the record lists."""
    return ioc.article_ids[:ARTICLE_CANDIDATES]


async def load_context(store: ArticleStore, iocs: Sequence[Ioc], *, generated_at: datetime, since: datetime,
                       until: datetime, tier: str, filters: tuple[tuple[str, str], ...] = ()) -> ExportContext:
    """The context of an export of ``iocs``: the articles it may cite, read in one query."""
    refs = await store.article_refs(a for ioc in iocs for a in candidate_articles(ioc))
    return ExportContext(generated_at=generated_at, since=since, until=until, tier=tier,
                         articles={key: ArticleRef(*row) for key, row in refs.items()}, filters=filters)


def indicator_id(ioc: Ioc) -> str:
    """The record's ``indicator`` id (a CVE's is not its object id: that is its vulnerability's)."""
    return stixids.indicator_id(ioc.type, ioc.value)


def records_digest(iocs: Sequence[Ioc]) -> str:
    """A digest of the records' identities: documents of the same records get the same deterministic id."""
    return hashlib.sha256("\n".join(f"{i.type}:{i.value}" for i in iocs).encode()).hexdigest()


def unique_records(iocs: Iterable[Ioc]) -> Iterator[Ioc]:
    """Each (type, value) once, first occurrence kept: one indicator is one record."""
    seen: set[tuple[str, str]] = set()
    for ioc in iocs:
        key = (ioc.type, ioc.value)
        if key not in seen:
            seen.add(key)
            yield ioc


def chunked(parts: Iterable[bytes], size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Regroup many small byte strings into chunks of about ``size`` bytes (the last may be shorter)."""
    buffer: list[bytes] = []
    filled = 0
    for part in parts:
        buffer.append(part)
        filled += len(part)
        if filled >= size:
            yield b"".join(buffer)
            buffer, filled = [], 0
    if buffer:
        yield b"".join(buffer)


class Exporter:
    """Base of every format: metadata as class variables, one ``encode`` hook.

    Subclasses set ``format_id`` (the registry key and URL segment), ``media_type`` (the response
    ``Content-Type``), ``extension`` (of the attachment), ``scope`` (the API key scope the endpoint needs)
    and ``summary`` (its OpenAPI summary). Routes, scopes, cost multipliers, CLI choices and precompute
    jobs all derive from these and the registry (exporters.registry), nowhere else. ``encode`` must be a
    pure function of its arguments, so a cached build and an on-demand build are byte-identical.
    """

    format_id: ClassVar[str]
    media_type: ClassVar[str]
    extension: ClassVar[str]
    scope: ClassVar[str]
    summary: ClassVar[str]
    cost: ClassVar[int] = IOC_EXPORT_COST
    notes: ClassVar[str] = ""  # what the OpenAPI description adds about the document's content

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        raise NotImplementedError

    def render(self, iocs: Sequence[Ioc], ctx: ExportContext) -> bytes:
        """The whole document at once (tests, CLI)."""
        return b"".join(self.encode(iocs, ctx))

    @classmethod
    def filename(cls, dt: datetime) -> str:
        """The dated attachment name, e.g. ``ctiwire-iocs-20261123T1300Z.stix.json`` (UTC, minute precision)."""
        return f"ctiwire-iocs-{ms(dt).strftime('%Y%m%dT%H%MZ')}.{cls.extension}"
