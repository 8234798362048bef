"""Webhooks: an account's URLs the live feed's events are POSTed to, and each one's recent deliveries.

Every read and write a user makes names the owner, so another account's webhook is not found (as
``FeedStore``). The delivery job reads every due webhook, claims it for a while (``claim``: one
deliverer per webhook at a time keeps its deliveries in order), and saves its cursor and retry state.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Webhook:
    """One webhook. ``filters``: the stream's filter parameters as given (lists of values by parameter name);
    ``match``: the same parsed, a ``store.event_filter.StreamFilter`` document; ``secret`` signs each
    delivery (kept as given: the server must sign with it, so it cannot be only a hash; it is never logged
    nor served after creation). ``cursor``: the last acknowledged event id (``<ms>-<seq>``)."""

    id: str
    user_id: str
    url: str
    filters: dict[str, Any]
    secret: str
    created_at: datetime
    match: dict[str, Any] = field(default_factory=dict)
    cursor: str | None = None
    failures: int = 0
    next_attempt: datetime | None = None
    paused: bool = False
    last_error: str | None = None

    @property
    def state(self) -> str:
        return "paused" if self.paused else "retrying" if self.failures else "active"


@dataclass(frozen=True, slots=True)
class Delivery:
    """One POST of a batch: its events' last id, the receiver's status (None: no answer) and latency."""

    id: str
    webhook_id: str
    at: datetime
    last_event_id: str
    events: int
    ok: bool
    status: int | None = None
    latency_ms: float = 0.0
    error: str | None = field(default=None)


class WebhookStore(abc.ABC):
    """Async storage of webhooks by (owner, id) and their deliveries."""

    @abc.abstractmethod
    async def create_webhook(self, hook: Webhook, max_webhooks: int) -> Webhook:
        """Insert ``hook``; QuotaExceeded when its owner already has ``max_webhooks``, Conflict when the owner
        does not exist."""

    @abc.abstractmethod
    async def list_webhooks(self, user_id: str) -> list[Webhook]:
        """The owner's webhooks, oldest first (then by id)."""

    @abc.abstractmethod
    async def get_webhook(self, user_id: str, webhook_id: str) -> Webhook | None:
        """The owner's webhook; None when it does not exist or belongs to another account."""

    @abc.abstractmethod
    async def delete_webhook(self, user_id: str, webhook_id: str) -> None:
        """Delete the owner's webhook and its deliveries; NotFound when the owner has no such webhook."""

    @abc.abstractmethod
    async def due_webhooks(self, now: datetime) -> list[Webhook]:
        """Every webhook not paused whose next attempt is not after ``now``, oldest first."""

    @abc.abstractmethod
    async def claim(self, webhook_id: str, now: datetime, until: datetime) -> bool:
        """Hold the webhook for delivery until ``until`` unless another deliverer holds it past ``now``."""

    @abc.abstractmethod
    async def release(self, webhook_id: str) -> None:
        """Give the claim back."""

    @abc.abstractmethod
    async def save_state(self, hook: Webhook) -> None:
        """Replace the cursor, failures, next attempt, paused and last error of ``hook`` (by id); a deleted
        webhook stays deleted."""

    @abc.abstractmethod
    async def add_delivery(self, delivery: Delivery, keep: int) -> None:
        """Record a delivery, keeping the webhook's newest ``keep``."""

    @abc.abstractmethod
    async def recent_deliveries(self, webhook_id: str, limit: int) -> list[Delivery]:
        """The webhook's newest deliveries first."""
