"""One key's own pages: delete after a confirmation, rotate the secret, rename and re-scope.

Each is a plain page with a form, so every action works without script. The key is named by its name in
the path and looked up among the signed-in user's keys only; an unknown name is the 404 page.
"""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError

from config.tiers import TIERS
from store import accounts
from store.accounts import GRACES, AccountError, expires_soon, key_state
from store.base import Conflict, NotFound
from store.records import ApiKey, utcnow
from web.base import PageHandler
from web.keys import error_message, keys_page

GRACE_LABELS = {"none": "No: the old secret stops at once", "1h": "1 hour", "24h": "24 hours"}
DEFAULT_GRACE = "1h"


class OneKeyPage(PageHandler):
    """A page about the key named in the path."""

    async def key(self, name: str) -> ApiKey:
        for key in await self.ctx.accounts.list_keys(self.user.id):
            if key.name == name:
                return key
        raise HTTPError(404)

    def key_page(self, template: str, key: ApiKey, **values: Any) -> None:
        now = utcnow()
        self.page(template, key=key, state=key_state(key, now), soon=expires_soon(key, now), **values)

    def gone(self, name: str) -> None:
        """The key went away between showing the form and sending it (another tab, the CLI)."""
        self.flash(f"You have no key named “{name}”.", "error")
        self.redirect("/account/keys")


class KeyDeleteHandler(OneKeyPage):
    """``GET /account/keys/{name}/delete``: what is about to go, and a form to confirm; ``POST`` deletes."""

    async def get(self, name: str) -> None:
        self.key_page("key_delete.html", await self.key(name))

    async def post(self, name: str) -> None:
        try:
            await self.ctx.accounts.delete_key(self.user.id, name)
        except NotFound:
            self.gone(name)
            return
        self.flash(f"Key “{name}” deleted.")
        self.redirect("/account/keys")


class KeyRotateHandler(OneKeyPage):
    """``GET /account/keys/{name}/rotate``: choose how long the old secret keeps working; ``POST`` makes the
    new secret and shows it once, on the list page, like a new key's."""

    async def get(self, name: str) -> None:
        self.key_page("key_rotate.html", await self.key(name), graces=GRACE_LABELS, grace=DEFAULT_GRACE, error=None)

    async def post(self, name: str) -> None:
        grace = self.get_body_argument("grace", DEFAULT_GRACE)
        try:
            new = await accounts.rotate_key(self.ctx.accounts, self.user.email, name, grace)
        except NotFound:
            self.gone(name)
            return
        except AccountError as exc:
            self.set_status(400)
            self.key_page("key_rotate.html", await self.key(name), graces=GRACE_LABELS, grace=DEFAULT_GRACE,
                          error=str(exc))
            return
        await accounts.deliver_key(self.ctx.accounts, new)  # delivered by this very response
        until = new.record.previous_expires_at if GRACES[grace] else None
        await keys_page(self, new_secret=new.secret, rotated=name, old_until=until)


class KeyEditHandler(OneKeyPage):
    """``GET /account/keys/{name}/edit``: the name and the scopes (within the tier's); ``POST`` saves them."""

    async def get(self, name: str) -> None:
        key = await self.key(name)
        self.edit_page(key, key.name, key.scopes)

    def edit_page(self, key: ApiKey, new_name: str, scopes: list[str], error: str | None = None) -> None:
        self.key_page("key_edit.html", key, tier=TIERS[self.user.tier], new_name=new_name, scopes=scopes,
                      error=error)

    async def post(self, name: str) -> None:
        key = await self.key(name)
        new_name, scopes = self.get_body_argument("name", ""), self.get_body_arguments("scopes")
        try:
            saved = await accounts.edit_key(self.ctx.accounts, self.user.email, name, new_name, scopes)
        except NotFound:
            self.gone(name)
            return
        except (AccountError, Conflict) as exc:
            self.set_status(400)
            self.edit_page(key, new_name, scopes, error_message(exc, self.user.tier))
            return
        self.flash(f"Key “{saved}” saved.")
        self.redirect("/account/keys")
