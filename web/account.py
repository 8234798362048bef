"""Landing page, sign-up, sign-in and sign-out.

A wrong e-mail and a wrong password get the same message in the same time: an unknown e-mail is checked
against a dummy argon2id hash (``store.accounts.check_password``). Throttling is ``web.throttle``: an
attempt is counted before its password is verified or hashed.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from server.context import AppContext
from store import accounts
from store.accounts import AccountError
from store.base import Conflict, StoreUnavailable
from store.passwords import Busy
from store.records import utcnow
from web import recovery, sessions, throttle
from web.base import PageHandler, log, secure_cookies

GENERIC_FAILURE = "Wrong e-mail or password."
SIGNED_UP = "Thank you. Sign in with the e-mail and password you chose. (If that e-mail already had an account, " \
            "its password has not changed.)"
TO_VERIFY = " Before you can create API keys, follow the link we sent to that address."


def local_next(target: str | None, pages: frozenset[str]) -> str:
    """Where to go after sign-in: one of this site's ``pages`` a GET can open (no open redirect, and no
    POST-only address such as the sign-out, which a redirect would turn into a 405), with its query, in
    visible ASCII (no space, control character, DEL or non-ASCII, which a ``Location`` header cannot
    carry); anything else goes to the keys."""
    if not target or not all("!" <= char <= "~" for char in target):
        return "/account/keys"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or parts.path not in pages:
        return "/account/keys"
    return target


class LandingHandler(PageHandler):
    """``GET /``: what the service is, and the ways in."""

    needs_user = False

    def get(self) -> None:
        self.page("landing.html")


class SignUpHandler(PageHandler):
    """``/account/signup``: a new Free user with an e-mail and a password of 12 or more characters.

    A new e-mail and one that has an account get the same answer (the same argon2 work, the same redirect
    and message), so the form does not tell anyone who has an account; only a new one is created, and the
    owner of an existing one is told by e-mail. With ``CTIWIRE_SIGNUP=verify`` the new account must follow
    a mailed link before it can create keys (``web.recovery``).
    """

    needs_user = False

    def _closed(self) -> bool:
        """True (and a 403 page) when sign-ups are closed (``CTIWIRE_SIGNUP=closed``)."""
        if self.ctx.settings.signup != "closed":
            return False
        self.set_status(403)
        self.page("error.html", status=403, message="Sign-ups are closed. Ask the operator for an account.")
        return True

    def get(self) -> None:
        if not self._closed():
            self.page("signup.html", email="", error=None)

    async def post(self) -> None:
        if self._closed():
            return
        email = self.get_body_argument("email", "").strip()
        password = self.get_body_argument("password", "")
        try:
            accounts.check_new_user(email, "free", password)
        except AccountError as exc:
            self._refuse(400, email, str(exc))
            return
        wait = await throttle.sign_up(self.ctx.accounts, self.client_address(), utcnow(),
                                      self.ctx.settings.signup_limit_scale)
        if wait:
            self._refuse(429, email, f"Too many sign-ups. Try again in {throttle.describe(wait)}.")
            return
        verify = self.ctx.settings.signup == "verify"
        try:
            user = await accounts.create_user(self.ctx.accounts, email, "free", password=password, unverified=verify)
        except Conflict:  # answered like a new account: the form must not reveal who has one
            recovery.in_background(recovery.mail_reset_link(self.ctx.accounts, self.ctx.settings, email,
                                                            recovery.already_registered(self.ctx.settings)))
        except Busy as exc:
            self._refuse(503, email, str(exc))
            return
        else:
            if verify:
                recovery.in_background(recovery.mail_verify_link(self.ctx.accounts, self.ctx.settings, user))
        self.flash(SIGNED_UP + (TO_VERIFY if verify else ""))
        self.redirect("/account/signin")

    def _refuse(self, status: int, email: str, message: str) -> None:
        self.set_status(status)
        self.page("signup.html", email=email, error=message)


def set_session(handler: PageHandler, token: str) -> None:
    handler.set_cookie(sessions.COOKIE, token, httponly=True, samesite="Lax", secure=secure_cookies(handler.ctx),
                       path="/")


class SignInHandler(PageHandler):
    """``/account/signin``: fields ``email`` and ``password``; then to ``next`` (a local path)."""

    needs_user = False

    def initialize(self, ctx: AppContext, next_pages: frozenset[str] = frozenset()) -> None:
        super().initialize(ctx)
        self.next_pages = next_pages  # the GET pages sign-in may lead to (``web.routes.next_pages``)

    def get(self) -> None:
        self.page("signin.html", email="", error=None, next=local_next(self.get_argument("next", None),
                                                                       self.next_pages))

    async def post(self) -> None:
        email = self.get_body_argument("email", "").strip().lower()
        password = self.get_body_argument("password", "")
        target = local_next(self.get_body_argument("next", None), self.next_pages)
        store, now = self.ctx.accounts, utcnow()
        wait = await throttle.sign_in(store, email, self.client_address(), now)  # counted before verifying
        if wait:
            self._refuse(429, email, target, f"Too many sign-ins. Try again in {throttle.describe(wait)}.")
            return
        try:
            user = await accounts.check_password(store, email, password)
        except Busy as exc:
            self._refuse(503, email, target, str(exc))
            return
        if user is None:
            self._refuse(400, email, target, GENERIC_FAILURE)
            return
        await throttle.succeeded(store, email)
        set_session(self, await sessions.start(store, user, now))
        self.redirect(target)

    def _refuse(self, status: int, email: str, target: str, message: str) -> None:
        self.set_status(status)
        self.page("signin.html", email=email, error=message, next=target)


class SignOutHandler(PageHandler):
    """``POST /account/signout``: the session ends server-side; replaying the old cookie fails."""

    async def post(self) -> None:
        self.clear_cookie(sessions.COOKIE, path="/")  # this browser is signed out whatever the store says
        if self.signed_in is not None:
            try:
                await sessions.end(self.ctx.accounts, self.signed_in)
            except StoreUnavailable as exc:
                log.warning("sign-out could not end the session on the server: %s", exc)
                self.set_status(503)
                self.render("error.html", signed_in=None, flash=None, status=503, message=(
                    "You are signed out in this browser, but the server could not end your session: it cannot "
                    f"save changes right now. It ends by itself after {self.ctx.settings.session_idle_minutes} "
                    f"minutes without use, and at the latest {self.ctx.settings.session_max_hours} hours after "
                    "you signed in; if someone else may hold it, change your password once the service is back."))
                return
        self.flash("You are signed out.")
        self.redirect("/account/signin")
