"""One round of webhook deliveries: every due webhook gets the events after its cursor, in order.

A webhook's cursor is the last event id its receiver acknowledged. A delivery reads the event log after
it, keeps the events its filters match (``store.event_filter``, the stream's matcher) up to a batch of
100 (and ``max_body`` bytes), POSTs them as one signed JSON body and, on a 2xx within the timeout, moves
the cursor past them. Anything else keeps the cursor where it was and schedules the same events again
after an exponential backoff, so events reach each receiver in order, and each at least once until it is
acknowledged. After ``max_failures`` failures in a row (over a day with the defaults) the webhook is
paused until its owner resumes it. A claim on the webhook keeps two deliverers from interleaving.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import httpcore
import httpx
import orjson

from config.settings import Settings
from config.tiers import TIERS
from store.event_filter import StreamFilter
from store.ports import Stores
from store.ports.events import Event, EventId, EventLog
from store.ports.webhooks import Delivery, Webhook
from webhooks.guard import GuardedBackend, UnsafeUrl, check_url
from webhooks.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, signature

log = logging.getLogger("ctiwire.webhooks")
READ_PAGE = 500
USER_AGENT = "ctiwire-webhooks/1"


@dataclass(frozen=True, slots=True)
class Policy:
    """How deliveries are made and retried (settings ``webhook_*``)."""

    allow_private: bool = False
    batch: int = 100
    max_body: int = 1024 * 1024
    max_response: int = 64 * 1024
    timeout: float = 10.0
    backoff_base: float = 30.0
    backoff_cap: float = 3600.0
    max_failures: int = 32
    keep_deliveries: int = 50
    scan_limit: int = 10_000  # events read per delivery when few match: the cursor moves past the rest
    batches_per_round: int = 10

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(
            allow_private=settings.webhook_allow_private,
            backoff_base=settings.webhook_backoff_seconds,
            max_failures=settings.webhook_max_failures,
        )

    @property
    def claim_for(self) -> timedelta:
        """Longer than a round of one webhook's batches can take, so a claim lapses only for a dead deliverer."""
        return timedelta(seconds=self.timeout * (self.batches_per_round + 3))

    def delay(self, failures: int) -> timedelta:
        """The wait after the ``failures``-th failure in a row: doubling from the base, capped."""
        return timedelta(seconds=min(self.backoff_cap, self.backoff_base * 2 ** (failures - 1)))


@dataclass(frozen=True, slots=True)
class Batch:
    events: list[Event]
    scanned: EventId | None  # the cursor once acknowledged: past the non-matching events read too
    body: bytes


def encode(hook_id: str, events: list[Event]) -> bytes:
    rows = [{"id": str(e.id), "event": e.kind, "data": orjson.Fragment(e.data)} for e in events]
    return orjson.dumps({"webhook_id": hook_id, "events": rows})


async def pending(log_: EventLog, hook: Webhook, policy: Policy) -> Batch:
    """The next batch after the cursor: matching events in order, bounded in count and bytes."""
    flt, scanned = StreamFilter.from_doc(hook.match), EventId.parse(hook.cursor) if hook.cursor else None
    chosen: list[Event] = []
    size, read = 0, 0
    while read < policy.scan_limit:
        page = await log_.read(scanned, READ_PAGE)
        for event in page:
            if flt.matches(event.kind, orjson.loads(event.data)):
                if len(chosen) == policy.batch or (chosen and size + len(event.data) > policy.max_body):
                    return Batch(chosen, scanned, encode(hook.id, chosen))
                chosen.append(event)
                size += len(event.data)
            scanned = event.id
        read += len(page)
        if len(page) < READ_PAGE:
            break
    return Batch(chosen, scanned, encode(hook.id, chosen))


@dataclass(frozen=True, slots=True)
class Outcome:
    """The receiver's answer: its status (None: none came) and, unless acknowledged, what went wrong."""

    status: int | None
    error: str | None = None


async def post(client: httpx.AsyncClient, hook: Webhook, batch: Batch, policy: Policy, now: datetime) -> Outcome:
    """POST the batch (after the address check); the error never holds the secret."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        EVENT_ID_HEADER: str(batch.events[-1].id),
        SIGNATURE_HEADER: signature(hook.secret, batch.body, int(now.timestamp())),
    }
    try:
        await check_url(hook.url, policy.allow_private)
        return await asyncio.wait_for(_send(client, hook.url, batch.body, headers, policy), policy.timeout)
    except UnsafeUrl as exc:
        return Outcome(None, f"refused: {exc}")
    except TimeoutError:
        return Outcome(None, f"no answer within {policy.timeout:g} s")
    except httpx.HTTPError as exc:
        return Outcome(None, f"{type(exc).__name__}: {exc}"[:300])


async def _send(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str], policy: Policy) -> Outcome:
    async with client.stream("POST", url, content=body, headers=headers) as response:
        read = 0
        async for chunk in response.aiter_bytes():  # read (bounded) so the connection can be reused
            read += len(chunk)
            if read > policy.max_response:
                break
        status = response.status_code
        return Outcome(status, None if 200 <= status < 300 else f"HTTP {status}")


def _after(hook: Webhook, batch: Batch, error: str | None, policy: Policy, now: datetime) -> Webhook:
    if error is None:
        cursor = str(batch.scanned) if batch.scanned else hook.cursor
        return replace(hook, cursor=cursor, failures=0, next_attempt=None)
    failures = hook.failures + 1
    if failures >= policy.max_failures:
        log.warning("webhook %s paused after %d failed deliveries: %s", hook.id, failures, error)
        return replace(hook, failures=failures, paused=True, next_attempt=None, last_error=error)
    return replace(hook, failures=failures, next_attempt=now + policy.delay(failures), last_error=error)


async def deliver_once(
    stores: Stores, client: httpx.AsyncClient, hook: Webhook, policy: Policy, now: datetime
) -> tuple[Webhook, bool]:
    """One batch for ``hook`` (or only its cursor moved, when nothing after it matches): the new state, and
    whether a batch was acknowledged."""
    batch = await pending(stores.events, hook, policy)
    if not batch.events:
        if batch.scanned is not None and str(batch.scanned) != hook.cursor:
            hook = replace(hook, cursor=str(batch.scanned))
            await stores.webhooks.save_state(hook)
        return hook, False
    started = time.perf_counter()
    outcome = await post(client, hook, batch, policy, now)
    record = Delivery(
        id=f"{time.time_ns():016x}-{uuid.uuid4().hex[:8]}",  # sorts as made: recent_deliveries orders by it
        webhook_id=hook.id,
        at=now,
        last_event_id=str(batch.events[-1].id),
        events=len(batch.events),
        ok=outcome.error is None,
        status=outcome.status,
        latency_ms=round((time.perf_counter() - started) * 1000, 1),
        error=outcome.error,
    )
    hook = _after(hook, batch, outcome.error, policy, now)
    await stores.webhooks.save_state(hook)
    await stores.webhooks.add_delivery(record, policy.keep_deliveries)
    return hook, outcome.error is None


async def deliver_hook(stores: Stores, client: httpx.AsyncClient, hook: Webhook, policy: Policy, now: datetime) -> int:
    """Batches for one claimed webhook until it is caught up, fails, or the round's share is used."""
    sent = 0
    for _ in range(policy.batches_per_round):
        hook, acknowledged = await deliver_once(stores, client, hook, policy, now)
        if not acknowledged:
            break
        sent += 1
    return sent


def make_client(allow_private: bool) -> httpx.AsyncClient:
    """Redirects are not followed (a 3xx is a failure), proxies from the environment are not used, and every
    connection goes through the address guard (``GuardedBackend``)."""
    transport = httpx.AsyncHTTPTransport(retries=0)
    # httpx 0.28's transport takes no network backend: its connection pool is replaced by one that has ours.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=GuardedBackend(allow_private)
    )
    return httpx.AsyncClient(transport=transport, follow_redirects=False, timeout=httpx.Timeout(10.0), trust_env=False)


async def deliver_due(stores: Stores, policy: Policy, now: datetime, client: httpx.AsyncClient | None = None) -> int:
    """Deliver to every due webhook this process can claim; returns the batches acknowledged."""
    own = client is None
    client = client or make_client(policy.allow_private)
    sent = 0
    try:
        for hook in await stores.webhooks.due_webhooks(now):
            if not await stores.webhooks.claim(hook.id, now, now + policy.claim_for):
                continue  # another deliverer has it
            try:
                if await _plan_allows(stores, hook):
                    sent += await deliver_hook(stores, client, hook, policy, now)
            finally:
                await stores.webhooks.release(hook.id)
    finally:
        if own:
            await client.aclose()
    return sent


async def _plan_allows(stores: Stores, hook: Webhook) -> bool:
    """Webhooks are a Pro feature: an owner moved to a plan without them finds the webhook paused, saying why
    (resuming it after an upgrade delivers from where it stopped)."""
    user = await stores.accounts.get_user(user_id=hook.user_id)
    if TIERS[user.tier].max_webhooks > 0:
        return True
    reason = f"the {user.tier.capitalize()} plan has no webhooks"
    await stores.webhooks.save_state(replace(hook, paused=True, next_attempt=None, last_error=reason))
    return False
