"""Saved feeds: named IOC filter sets, each owned by one account.

Every read and write names the owner, so a feed of another account is simply not found (no IDOR): the
store never hands a feed to a caller that does not own it.
"""

from __future__ import annotations

import abc

from store.records import Feed


class FeedStore(abc.ABC):
    """Async storage of saved feeds by (owner, id)."""

    @abc.abstractmethod
    async def create_feed(self, feed: Feed, max_feeds: int) -> Feed:
        """Insert ``feed``; QuotaExceeded when its owner already has ``max_feeds``, Conflict when the owner
        has a feed of that name."""

    @abc.abstractmethod
    async def list_feeds(self, user_id: str) -> list[Feed]:
        """The owner's feeds, oldest first (then by id)."""

    @abc.abstractmethod
    async def get_feed(self, user_id: str, feed_id: str) -> Feed | None:
        """The owner's feed ``feed_id``; None when it does not exist or belongs to another account."""

    @abc.abstractmethod
    async def update_feed(self, feed: Feed) -> Feed:
        """Replace name, filters and ``modified_at`` of the owner's feed; NotFound when the owner has no
        such feed, Conflict when another of the owner's feeds has the new name."""

    @abc.abstractmethod
    async def delete_feed(self, user_id: str, feed_id: str) -> None:
        """Delete the owner's feed; NotFound when the owner has no such feed."""

    @abc.abstractmethod
    async def all_feeds(self) -> list[Feed]:
        """Every account's feeds (the export precompute job), by owner then creation."""
