"""``/account/settings``: change the password, sign out everywhere, delete the account.

A change of password and a deletion ask for the current password (OWASP Authentication cheat sheet,
"Require re-authentication for sensitive features"), counted by the sign-in throttle of the account
before it is verified. A new password ends every other session (a thief's session dies with the old
password) and gives this browser a new one.
"""

from __future__ import annotations

from store import accounts
from store.accounts import AccountError
from store.passwords import Busy
from store.records import utcnow
from web import sessions, throttle
from web.account import set_session
from web.base import PageHandler

WRONG_PASSWORD = "That is not your current password."


class SettingsHandler(PageHandler):
    """``GET /account/settings``: the account's forms."""

    async def get(self) -> None:
        self.page("settings.html", error=None)


class ReauthenticatedHandler(PageHandler):
    """A form that acts only with the signed-in user's current password (field ``current``)."""

    async def confirmed(self, template: str, **values: object) -> bool:
        """True when ``current`` is right; else the form again with why, and False."""
        user, now = self.user, utcnow()
        wait = await throttle.sign_in(self.ctx.accounts, user.email, self.client_address(), now)
        if wait:
            return self.refuse(429, template, f"Too many attempts. Try again in {throttle.describe(wait)}.", **values)
        try:
            current = self.get_body_argument("current", "")
            checked = await accounts.check_password(self.ctx.accounts, user.email, current)
        except Busy as exc:
            return self.refuse(503, template, str(exc), **values)
        if checked is None:
            return self.refuse(400, template, WRONG_PASSWORD, **values)
        await throttle.succeeded(self.ctx.accounts, user.email)
        return True

    def refuse(self, status: int, template: str, message: str, **values: object) -> bool:
        self.set_status(status)
        self.page(template, error=message, **values)
        return False


class PasswordHandler(ReauthenticatedHandler):
    """``POST /account/password``: fields ``current`` and ``password``."""

    async def post(self) -> None:
        password = self.get_body_argument("password", "")
        try:
            accounts.check_password_length(password)
        except AccountError as exc:
            self.refuse(400, "settings.html", str(exc))
            return
        if not await self.confirmed("settings.html"):
            return
        user = await accounts.set_password(self.ctx.accounts, self.user.email, password)  # every session ends...
        set_session(self, await sessions.start(self.ctx.accounts, user, utcnow()))  # ...and this browser goes on
        self.flash("Your password is changed. Every other session has ended.")
        self.redirect("/account/settings")


class SignOutEverywhereHandler(PageHandler):
    """``POST /account/signout-everywhere``: every session of the user ends, this one too."""

    async def post(self) -> None:
        ended = await self.ctx.accounts.delete_sessions(user_id=self.user.id)
        self.clear_cookie(sessions.COOKIE, path="/")
        self.flash(f"You are signed out everywhere ({ended} session{'s' if ended != 1 else ''} ended).")
        self.redirect("/account/signin")


class DeleteAccountHandler(ReauthenticatedHandler):
    """``/account/delete``: a confirmation page; its POST (with the password) deletes the user, its keys
    (revoked: the API answers 401 at once) and its sessions. The e-mail can sign up again."""

    async def get(self) -> None:
        self.page("delete.html", error=None, keys=len(await self.ctx.accounts.list_keys(self.user.id)))

    async def post(self) -> None:
        keys = len(await self.ctx.accounts.list_keys(self.user.id))
        if not await self.confirmed("delete.html", keys=keys):
            return
        await self.ctx.accounts.delete_user(self.user.id)
        self.clear_cookie(sessions.COOKIE, path="/")
        self.flash(f"Your account {self.user.email} is deleted, with its API keys and sessions.")
        self.redirect("/account/signin")
