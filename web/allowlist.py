"""``/account/allowlist``: the signed-in account's allowlist: the values, networks and domains its keys'
exports and TAXII pages leave out; add them (one a line) and delete them.

The forms end in the API's own checks and writes (``server.allowlist``): an entry the API refuses is
refused here with the same words, the plan's quota holds alike, and an entry is deleted among the
signed-in user's entries only.
"""

from __future__ import annotations

from config.tiers import TIERS
from server.allowlist import add_entries, parse_entries
from server.errors import ApiError
from store.base import NotFound
from web.base import PageHandler


class AllowlistPage(PageHandler):
    """``GET``: the entries and the form; ``POST``: add the entries typed, one a line."""

    async def get(self) -> None:
        await self.list_page("", "")

    async def list_page(self, typed: str, note: str, error: str | None = None) -> None:
        entries = await self.ctx.stores.allowlist.list_allow_entries(self.user.id)
        self.page("allowlist.html", entries=entries, typed=typed, note=note, error=error, tier=TIERS[self.user.tier])

    async def post(self) -> None:
        typed, note = self.get_body_argument("entries", ""), self.get_body_argument("note", "").strip()
        lines = [line.strip() for line in typed.splitlines() if line.strip()]
        try:
            entries = parse_entries({"entries": [{"value": line, "note": note} for line in lines]}, self.user)
            await add_entries(self.ctx.stores.allowlist, self.user, entries, self.ctx.settings.upgrade_url)
        except ApiError as exc:
            self.set_status(400)
            await self.list_page(typed, note, exc.message)
            return
        self.flash(f"{len(entries)} {'entry' if len(entries) == 1 else 'entries'} added to your allowlist.")
        self.redirect("/account/allowlist")


class AllowlistDeleteHandler(PageHandler):
    """``POST /account/allowlist/{id}/delete``: the entry goes; the exports include its values again."""

    async def post(self, entry_id: str) -> None:
        try:
            await self.ctx.stores.allowlist.delete_allow_entry(self.user.id, entry_id)
        except NotFound:
            pass  # deleted meanwhile (another tab, the API), or not the user's: nothing of theirs changes
        self.flash("Entry deleted from your allowlist.")
        self.redirect("/account/allowlist")
