"""``/account/keys``: list, create, deactivate and reactivate the user's API keys; deleting, rotating and
editing one key have their own pages (``web.keyforms``).

The secret of a new key exists only in the response to the POST that created it (the store keeps its
SHA-256): the page shows it once, and neither a reload nor a later visit can show it again. Every
action names the key by its name in the path and acts on the signed-in user's keys only.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from config.tiers import TIERS
from store import accounts
from store.accounts import AccountError, expires_soon, key_state
from store.base import Conflict, NotFound, QuotaExceeded
from store.records import utcnow
from web.base import PageHandler

MAX_EXPIRY_DAYS = 3650


class KeysHandler(PageHandler):
    """``GET /account/keys`` (the list and the create form); ``POST`` creates a key."""

    async def get(self) -> None:
        await keys_page(self)

    async def post(self) -> None:
        name = self.get_body_argument("name", "").strip()
        days_text = self.get_body_argument("expires_in_days", "").strip()
        scopes = self.get_body_arguments("scopes")
        try:
            expires = _expiry(days_text)
            created = await accounts.create_key(self.ctx.accounts, self.user.email, name, scopes or None, expires)
        except (AccountError, Conflict, QuotaExceeded) as exc:
            self.set_status(400)
            form = {"name": name, "expires_in_days": days_text}
            await keys_page(self, error=error_message(exc, self.user.tier), form=form)
            return
        # The response delivers the secret; activated just before it is written (the page lists the key active).
        await accounts.deliver_key(self.ctx.accounts, created)
        await keys_page(self, new_secret=created.secret)


async def keys_page(handler: PageHandler, new_secret: str | None = None, **values: Any) -> None:
    """The list and the create form; ``new_secret`` is a secret just created or rotated, shown this once
    (``rotated``: the name of the key it now opens, ``old_until``: when its former secret stops)."""
    user, now = handler.user, utcnow()
    keys = await handler.ctx.accounts.list_keys(user.id)
    rows = [(key, key_state(key, now), expires_soon(key, now)) for key in keys]
    values.setdefault("form", {"name": "", "expires_in_days": ""})
    handler.page("keys.html", rows=rows, tier=TIERS[user.tier], new_secret=new_secret,
                 **{"error": None, "rotated": None, "old_until": None, **values})


def _expiry(days_text: str) -> Any:
    if not days_text:
        return None
    if not days_text.isdigit() or not 1 <= int(days_text) <= MAX_EXPIRY_DAYS:
        raise AccountError(f"Expiry must be a whole number of days from 1 to {MAX_EXPIRY_DAYS}, or empty for none.")
    return utcnow() + timedelta(days=int(days_text))


def error_message(exc: Exception, tier: str) -> str:
    if isinstance(exc, QuotaExceeded):
        return (f"Your {tier.capitalize()} plan allows at most {TIERS[tier].max_keys} API keys. "
                "Delete a key you no longer use first.")
    if isinstance(exc, Conflict):
        return "You already have a key with this name: choose another name."
    return str(exc)


class KeyActionHandler(PageHandler):
    """``POST /account/keys/{name}/deactivate|activate``; then back to the list with a message."""

    async def post(self, name: str, action: str) -> None:
        try:
            await self.ctx.accounts.set_key_active(self.user.id, name, action == "activate")
        except NotFound:
            self.flash(f"You have no key named “{name}”.", "error")
        else:
            self.flash(f"Key “{name}” {'reactivated' if action == 'activate' else 'deactivated'}.")
        self.redirect("/account/keys")
