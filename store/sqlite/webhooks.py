"""Webhooks on the SQLite backend: one row per webhook (state in ``doc``; what the due query and the claim
read as columns) and one per delivery; a deleted user's webhooks and their deliveries go with it."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

import orjson

from store.base import Conflict, NotFound, QuotaExceeded
from store.codec import from_doc, to_doc
from store.ports.webhooks import Delivery, Webhook, WebhookStore
from store.records import iso
from store.sqlite.part import SqlitePart, _json


def _hook(row: Any) -> Webhook:
    return from_doc(Webhook, orjson.loads(row[0]))


def _next(hook: Webhook) -> str:
    return iso(hook.next_attempt) if hook.next_attempt else ""  # "" sorts before every time: due now


class SqliteWebhooks(SqlitePart, WebhookStore):
    """Webhooks in the ``webhooks`` table, deliveries in ``webhook_deliveries``."""

    async def create_webhook(self, hook: Webhook, max_webhooks: int) -> Webhook:
        def insert(db: sqlite3.Connection) -> None:
            held = db.execute("SELECT count(*) FROM webhooks WHERE user_id = ?", (hook.user_id,)).fetchone()[0]
            if held >= max_webhooks:  # counted in the inserting transaction: two creations cannot both pass
                raise QuotaExceeded(f"this plan allows at most {max_webhooks} webhooks")
            db.execute(
                "INSERT INTO webhooks (id, user_id, created_at, paused, next_attempt, doc) VALUES (?, ?, ?, ?, ?, ?)",
                (hook.id, hook.user_id, iso(hook.created_at), int(hook.paused), _next(hook), _json(to_doc(hook))),
            )

        try:
            await self._run(lambda db: self._write(db, insert))
        except sqlite3.IntegrityError as exc:  # the foreign key: no such user
            raise Conflict("the webhook has no owner") from exc
        return hook

    async def list_webhooks(self, user_id: str) -> list[Webhook]:
        rows = await self._all("SELECT doc FROM webhooks WHERE user_id = ? ORDER BY created_at, id", (user_id,))
        return [_hook(r) for r in rows]

    async def get_webhook(self, user_id: str, webhook_id: str) -> Webhook | None:
        row = await self._one("SELECT doc FROM webhooks WHERE user_id = ? AND id = ?", (user_id, webhook_id))
        return None if row is None else _hook(row)

    async def delete_webhook(self, user_id: str, webhook_id: str) -> None:
        def delete(db: sqlite3.Connection) -> None:
            if not db.execute("DELETE FROM webhooks WHERE user_id = ? AND id = ?", (user_id, webhook_id)).rowcount:
                raise NotFound(f"no webhook {webhook_id!r}")

        await self._run(lambda db: self._write(db, delete))

    async def due_webhooks(self, now: datetime) -> list[Webhook]:
        rows = await self._all(
            "SELECT doc FROM webhooks WHERE paused = 0 AND next_attempt <= ? ORDER BY created_at, id", (iso(now),)
        )
        return [_hook(r) for r in rows]

    async def claim(self, webhook_id: str, now: datetime, until: datetime) -> bool:
        def take(db: sqlite3.Connection) -> bool:
            done = db.execute(
                "UPDATE webhooks SET claimed_until = ? WHERE id = ? AND (claimed_until IS NULL OR claimed_until <= ?)",
                (iso(until), webhook_id, iso(now)),
            )
            return bool(done.rowcount)

        return await self._run(lambda db: self._write(db, take))

    async def release(self, webhook_id: str) -> None:
        await self._run(
            lambda db: self._write(
                db, lambda d: d.execute("UPDATE webhooks SET claimed_until = NULL WHERE id = ?", (webhook_id,))
            )
        )

    async def save_state(self, hook: Webhook) -> None:
        def update(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE webhooks SET paused = ?, next_attempt = ?, doc = ? WHERE id = ?",
                (int(hook.paused), _next(hook), _json(to_doc(hook)), hook.id),
            )

        await self._run(lambda db: self._write(db, update))

    async def add_delivery(self, delivery: Delivery, keep: int) -> None:
        def insert(db: sqlite3.Connection) -> None:
            db.execute(
                "INSERT OR IGNORE INTO webhook_deliveries (webhook_id, at, id, doc) VALUES (?, ?, ?, ?)",
                (delivery.webhook_id, iso(delivery.at), delivery.id, _json(to_doc(delivery))),
            )
            db.execute(
                "DELETE FROM webhook_deliveries WHERE webhook_id = ? AND (at, id) NOT IN (SELECT at, id FROM "
                "webhook_deliveries WHERE webhook_id = ? ORDER BY at DESC, id DESC LIMIT ?)",
                (delivery.webhook_id, delivery.webhook_id, keep),
            )

        await self._run(lambda db: self._write(db, insert))

    async def recent_deliveries(self, webhook_id: str, limit: int) -> list[Delivery]:
        rows = await self._all(
            "SELECT doc FROM webhook_deliveries WHERE webhook_id = ? ORDER BY at DESC, id DESC LIMIT ?",
            (webhook_id, limit),
        )
        return [from_doc(Delivery, orjson.loads(r[0])) for r in rows]
