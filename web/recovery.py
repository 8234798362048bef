"""What the account web sends by e-mail, and the pages its links open: a forgotten password, the address
check of ``CTIWIRE_SIGNUP=verify``, and the note to an owner whose e-mail someone tried to sign up with.

Following the OWASP Forgot Password cheat sheet: the form answers a known and an unknown e-mail alike, in
the same time (the message leaves in the background); the link's secret has 256 random bits, only its
SHA-256 is stored, it works once and for ``store.accounts.TOKEN_LIFETIMES``; a reset ends every session.
Links are built from ``CTIWIRE_PUBLIC_URL`` (else this server's own host and port), never from the
request's ``Host`` header, which a stranger could set to their own site.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any
from urllib.parse import quote

from config.settings import Settings
from store import accounts, mail
from store.accounts import AccountError
from store.base import NotFound, StoreError
from store.passwords import Busy
from store.ports import AccountStore, TokenStore
from store.records import User, utcnow
from web import sessions, throttle
from web.base import PageHandler

log = logging.getLogger("ctiwire.web")
FORGOT_ANSWER = ("If an account has this e-mail, a link to choose a new password is on its way. It works once, "
                 "for 30 minutes.")
_SENDING: set[asyncio.Task[None]] = set()  # the messages in flight (a task nobody holds may be collected)


def site_url(settings: Settings) -> str:
    if settings.public_url:
        return settings.public_url.rstrip("/")
    host = "localhost" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.port}"


def in_background(work: Coroutine[Any, Any, None]) -> None:
    """Look the account up, make the link and send the mail after the answer: the form's answer neither
    waits for the mail nor, by its timing, tells whether there was an account to write to."""
    async def run() -> None:
        try:
            await work
        except (OSError, StoreError) as exc:  # smtplib's errors are OSErrors too
            log.warning("account mail not sent: %s", exc)
        except Exception:  # nobody awaits this task: a bug is logged here or nowhere
            log.exception("account mail not sent")

    task = asyncio.ensure_future(run())
    _SENDING.add(task)
    task.add_done_callback(_SENDING.discard)


async def mail_reset_link(store: AccountStore, settings: Settings, email: str, why: str) -> None:
    """A password-reset link to the account of ``email``, if there is one."""
    try:
        user = await store.get_user(email=email)
    except NotFound:
        return
    token = await accounts.issue_token(store, user, "reset")
    link = f"{site_url(settings)}/account/reset?token={quote(token)}"
    await mail.send(settings, user.email, "Choose a new ctiwire password", f"{why}\n\nTo choose a new password, "
                    f"open this link within 30 minutes (it works once):\n\n{link}\n\nIf you did not ask for it, "
                    "ignore this message: your password stays as it is.\n")


async def mail_verify_link(store: TokenStore, settings: Settings, user: User) -> None:
    token = await accounts.issue_token(store, user, "verify")
    link = f"{site_url(settings)}/account/verify?token={quote(token)}"
    await mail.send(settings, user.email, "Confirm your ctiwire e-mail address",
                    f"Welcome to ctiwire. To confirm this address and create API keys, open this link within two "
                    f"days:\n\n{link}\n\nIf you did not sign up, ignore this message.\n")


def already_registered(settings: Settings) -> str:
    """Why the owner of an account gets a link after someone signed up with its e-mail (the form says nothing)."""
    return ("Someone (perhaps you) tried to sign up to ctiwire with this address, which already has an account; "
            f"nothing was changed. You can sign in at {site_url(settings)}/account/signin.\n\nForgot your password?")


class ForgotHandler(PageHandler):
    """``/account/forgot``: an e-mail in, the same answer whatever it is; a link out when it has an account."""

    needs_user = False

    def get(self) -> None:
        self.page("forgot.html", email="", error=None)

    async def post(self) -> None:
        email = self.get_body_argument("email", "").strip().lower()
        wait = await throttle.forgot(self.ctx.accounts, email, self.client_address(), utcnow())
        if wait:
            self.set_status(429)
            self.page("forgot.html", email=email, error=f"Too many requests. Try again in {throttle.describe(wait)}.")
            return
        in_background(mail_reset_link(self.ctx.accounts, self.ctx.settings, email, "Someone (perhaps you) asked to "
                                      "reset the password of your ctiwire account."))
        self.flash(FORGOT_ANSWER, "info")
        self.redirect("/account/signin")


class ResetHandler(PageHandler):
    """``/account/reset?token=...``: a new password for the link's account; every session ends. The GET
    uses nothing up (a mail scanner opening the link must not spend it); the POST does."""

    needs_user = False

    def get(self) -> None:
        self.page("reset.html", token=self.get_query_argument("token", ""), error=None)

    async def post(self) -> None:
        token, password = self.get_body_argument("token", ""), self.get_body_argument("password", "")
        try:
            accounts.check_password_length(password)  # before the link is used up
        except AccountError as exc:
            self._refuse(400, token, str(exc))
            return
        user = await accounts.redeem_token(self.ctx.accounts, token, "reset")
        if user is None:
            self._refuse(400, "", "This link has expired or was used already. Ask for a new one below.")
            return
        try:
            await accounts.set_password(self.ctx.accounts, user.email, password)
        except Busy as exc:
            self._refuse(503, "", f"{exc} Ask for a new link.")
            return
        if user.unverified:  # the link came by e-mail: the address is proven
            await accounts.mark_verified(self.ctx.accounts, user)
        self.clear_cookie(sessions.COOKIE, path="/")
        self.flash("Your password is changed and every session has ended. Sign in with the new password.")
        self.redirect("/account/signin")

    def _refuse(self, status: int, token: str, message: str) -> None:
        self.set_status(status)
        self.page("reset.html", token=token, error=message)


class VerifyHandler(PageHandler):
    """``GET /account/verify?token=...``: the address is confirmed; API keys can be created from now on. Used
    up at the GET (unlike a reset): whoever opens the link, a mail scanner included, proves the mailbox."""

    needs_user = False

    async def get(self) -> None:
        user = await accounts.redeem_token(self.ctx.accounts, self.get_query_argument("token", ""), "verify")
        if user is None:
            self.set_status(400)
            self.page("error.html", status=400, message="This link has expired or was used already. Sign in "
                      "and ask for a new one.")
            return
        await accounts.mark_verified(self.ctx.accounts, user)
        self.flash("Your e-mail address is confirmed: you can create API keys now.")
        self.redirect("/account/keys")


class ResendHandler(PageHandler):
    """``POST /account/verify/resend``: a new address-check link for the signed-in, unverified user."""

    async def post(self) -> None:
        user = self.user
        if not user.unverified:
            self.flash("Your e-mail address is already confirmed.")
        elif wait := await throttle.mail(self.ctx.accounts, user.email, utcnow()):
            self.flash(f"A link was sent a moment ago. Ask again in {throttle.describe(wait)}.", "error")
        else:
            in_background(mail_verify_link(self.ctx.accounts, self.ctx.settings, user))
            self.flash(f"A new link is on its way to {user.email}.")
        self.redirect("/account/keys")
