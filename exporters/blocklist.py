"""A plain-text blocklist: one value per line, for firewalls, resolvers, proxies and mail gateways.

Every consumer of such a list (an ipset or pf table, a Pi-hole or Squid ACL file, a mail gateway's sender
list) reads one value per line and skips lines starting with ``#``. The list opens with ``#`` lines
saying when it was generated, its window and filters, and what it left out; each IOC type is a section
headed by a ``#`` line with its count, values sorted, so a consumer that wants one type asks for it with
``?type=`` and a diff between two builds shows only what changed. CVE and technique records are context,
not values to block (the registry's reasons, counted in the header). A value that a line cannot carry
intact (one holding whitespace or a control character, or starting with ``#``) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import ClassVar

from config.tiers import LIST_EXPORT_COST, SCOPE_EXPORTS
from exporters.base import ExportContext, Exporter, chunked, unique_records
from store.ioctypes import Blocklist, mapping, specs, supported
from store.records import Ioc

UNLISTABLE_NOTE = "record(s) omitted: the value holds whitespace or a control character, or starts with '#'"


def listable(value: str) -> bool:
    """Whether one line carries ``value`` intact and no reader takes it for a comment or two values."""
    return bool(value) and not value.startswith("#") and value.isprintable() and not any(c.isspace() for c in value)


def sections(iocs: Sequence[Ioc]) -> Iterator[tuple[str, list[str]]]:
    """(type, sorted values) for each listed type, in registration order."""
    by_type: dict[str, list[str]] = {}
    for ioc in iocs:
        by_type.setdefault(ioc.type, []).append(ioc.value)
    for spec in specs():
        if spec.name in by_type:
            yield spec.name, sorted(by_type[spec.name])


class BlocklistExporter(Exporter):
    """Plain text, one value per line under ``#`` comments; an empty result is the header alone."""

    format_id: ClassVar[str] = "blocklist"
    media_type: ClassVar[str] = "text/plain; charset=utf-8"
    extension: ClassVar[str] = "blocklist.txt"
    scope: ClassVar[str] = SCOPE_EXPORTS
    summary: ClassVar[str] = "a plain-text blocklist, one value per line"
    cost: ClassVar[int] = LIST_EXPORT_COST

    def encode(self, iocs: Sequence[Ioc], ctx: ExportContext) -> Iterator[bytes]:
        records = [i for i in unique_records(iocs) if supported(i.type, "blocklist")]
        listed = [i for i in records if listable(i.value)]
        dropped = len(records) - len(listed)
        notes = [f"{dropped} {UNLISTABLE_NOTE}"] if dropped else []
        header = ctx.header_lines(
            "blocklist: one value per line; lines starting with # are comments", iocs, "blocklist", notes
        )
        yield "".join(f"# {line}\n" for line in header).encode()
        yield from chunked(self._lines(listed))

    @staticmethod
    def _lines(records: Sequence[Ioc]) -> Iterator[bytes]:
        for ioc_type, values in sections(records):
            use = mapping(ioc_type, "blocklist", Blocklist).use
            yield f"# {ioc_type}: {len(values)} value(s) ({use})\n".encode()
            yield "".join(f"{value}\n" for value in values).encode()
