"""Per-account allowlists: values, networks and domains an account never wants in its IOC exports and TAXII.

Every read and write names the owner, so another account's entry is simply not found. Entries are kept as
the account gave them, normalised (``store.exclusions.parse_entry``); ``store.exclusions`` turns an account's
entries into the matcher its exports apply.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from datetime import datetime

from store.records import iso

# Entry kinds: one indicator value; an IP network (a CIDR); a domain with every subdomain under it.
ENTRY_KINDS: tuple[str, ...] = ("value", "cidr", "domain")


@dataclass(slots=True)
class AllowEntry:
    """One allowlist entry: ``value`` is normalised for its ``kind`` (``type`` is the IOC type of a
    ``value`` entry, ``ipv4``/``ipv6`` of a ``cidr``, ``domain`` of a ``domain``)."""

    id: str
    user_id: str
    kind: str
    type: str
    value: str
    created_at: datetime
    note: str = ""

    def to_api(self) -> dict[str, str]:
        return {
            "id": self.id,
            "kind": self.kind,
            "type": self.type,
            "value": self.value,
            "note": self.note,
            "created_at": iso(self.created_at),
        }


class AllowlistStore(abc.ABC):
    """Async storage of allowlist entries by (owner, id); one entry per (owner, kind, value)."""

    @abc.abstractmethod
    async def add_allow_entries(self, entries: list[AllowEntry], max_entries: int) -> list[AllowEntry]:
        """Add ``entries`` (one owner's) and return them as stored: an entry the owner already holds (same
        kind and value) comes back as held, not twice. QuotaExceeded when the owner would hold more than
        ``max_entries``; nothing is added then."""

    @abc.abstractmethod
    async def list_allow_entries(self, user_id: str) -> list[AllowEntry]:
        """The owner's entries, oldest first (then by id)."""

    @abc.abstractmethod
    async def delete_allow_entry(self, user_id: str, entry_id: str) -> None:
        """Delete the owner's entry; NotFound when the owner has no such entry."""
