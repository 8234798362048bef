"""PageHandler: the plumbing of every account-web page.

- Security headers on every page, errors included: a Content-Security-Policy with no inline script,
  framing denied, ``nosniff``, a same-origin referrer, ``no-store`` (pages show keys and usage).
- The signed-in user from the session cookie (``web.sessions``); pages that need one redirect to
  ``/account/signin?next=<path>``.
- CSRF: every POST must carry the form's ``_xsrf`` token (403, nothing changed): bound to the session once
  signed in (``web.csrf``), Tornado's cookie token before. Checked here rather than by the application-wide
  ``xsrf_cookies`` setting, which would also turn the API's 405 for a POST into a 403.
- Templates are Tornado's, with autoescaping on: everything a user typed is shown as text.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from tornado.web import HTTPError, RequestHandler

from server.base import new_request_id, request_limit_error
from server.context import AppContext
from store.base import StoreUnavailable
from store.records import User, utcnow
from web import csrf, sessions
from web.sessions import SignedIn

log = logging.getLogger("ctiwire.web")
TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
# Swagger UI sets style attributes from its script, hence 'unsafe-inline' for styles only; no script is inline.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
FLASH_COOKIE = "ctiwire_flash"
# Why a page was reached, named by its ``reason`` query argument: shown as the page's message.
SESSION_ENDED = "session-ended"
NOTICES = {SESSION_ENDED: ("info", "Your session ended; sign in again.")}


def secure_cookies(ctx: AppContext) -> bool:
    """``Secure`` cookies when the public address is https or the operator says so."""
    public = ctx.settings.public_url or ""
    return ctx.settings.cookie_secure or public.lower().startswith("https://")


def when(moment: datetime | str | None, empty: str = "never") -> str:
    """A moment as every page shows it: to the minute, in UTC, with the zone named (``2026-11-26 19:40 UTC``).
    ``moment`` is a datetime (naive ones are UTC, as the store keeps them) or an ISO 8601 string."""
    if moment is None:
        return empty
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


class PageHandler(RequestHandler):
    """Base of every page. ``needs_user`` pages redirect to sign-in when nobody is signed in."""

    needs_user: ClassVar[bool] = True
    ctx: AppContext
    signed_in: SignedIn | None

    def initialize(self, ctx: AppContext) -> None:
        self.ctx = ctx
        self.signed_in = None

    def set_default_headers(self) -> None:
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "same-origin")
        self.set_header("Cache-Control", "no-store")

    def get_template_path(self) -> str:
        return str(TEMPLATES)

    def get_template_namespace(self) -> dict[str, Any]:
        return {**super().get_template_namespace(), "when": when}

    async def prepare(self) -> None:
        self.request_id = new_request_id()
        self.set_header("X-Request-Id", self.request_id)
        too_large = request_limit_error(self.request)
        if too_large is not None:
            raise HTTPError(too_large.status, too_large.message)
        store, settings, now = self.ctx.accounts, self.ctx.settings, utcnow()
        self.signed_in = await sessions.find(store, settings, self.get_cookie(sessions.COOKIE), now)
        if self.request.method not in ("GET", "HEAD"):
            self.check_xsrf_cookie()  # the token depends on the session; a refused form changes nothing
        if self.signed_in is not None:
            await sessions.keep_alive(store, settings, self.signed_in, now)
        if self.signed_in is None and self.needs_user:
            self.to_sign_in()

    def to_sign_in(self) -> None:
        """To sign-in, then back here. A session cookie that opens no session (idle, too old, signed out
        elsewhere) means the session ended: the cookie goes and the sign-in page says why."""
        target = "/account/signin?next=" + quote(self.request.path, safe="/")
        if self.get_cookie(sessions.COOKIE):
            self.clear_cookie(sessions.COOKIE, path="/")
            target += "&reason=" + SESSION_ENDED
        self.redirect(target)

    @property
    def xsrf_token(self) -> bytes:
        """The token the forms carry (``xsrf_form_html``): the session's once signed in."""
        if self.signed_in is None:
            return super().xsrf_token
        return csrf.session_token(self.ctx.settings.secret_key, self.signed_in.session.id).encode()

    def check_xsrf_cookie(self) -> None:
        """A signed-in POST must present its session's token; Tornado's cookie token counts only before."""
        if self.signed_in is None:
            super().check_xsrf_cookie()
            return
        # the form field only: every form of the account web posts it, and no script sends the token in a header
        if not csrf.matches(self.xsrf_token.decode(), self.get_body_argument(csrf.FIELD, None)):
            raise HTTPError(403, "the form's token is not this session's")

    @property
    def user(self) -> User:
        if self.signed_in is None:
            raise HTTPError(401)
        return self.signed_in.user

    def get_current_user(self) -> User | None:
        return None if self.signed_in is None else self.signed_in.user

    def flash(self, message: str, kind: str = "ok") -> None:
        """A message for the next page (a signed, short-lived cookie: after a redirect, shown once)."""
        self.set_signed_cookie(FLASH_COOKIE, f"{kind}:{message}", expires_days=None, httponly=True,
                               samesite="Lax", secure=secure_cookies(self.ctx), path="/account")

    def take_flash(self) -> tuple[str, str] | None:
        """The message of the previous request (a flash cookie), else the one a ``reason`` argument names."""
        raw = self.get_signed_cookie(FLASH_COOKIE, max_age_days=1)
        if raw is None:
            return NOTICES.get(self.get_query_argument("reason", ""))
        self.clear_cookie(FLASH_COOKIE, path="/account")
        kind, _, message = raw.decode().partition(":")
        return kind, message

    def page(self, template: str, **values: Any) -> None:
        """Render ``template`` inside the site layout; ``flash`` may be passed or comes from the cookie."""
        values.setdefault("flash", self.take_flash())
        self.render(template, signed_in=self.signed_in, **values)

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        if isinstance(value, StoreUnavailable):  # an outage or a full disk, not a bug: one line, no traceback
            log.warning("%s %s: %s", self.request.method, self.request.path, value)
            return
        super().log_exception(typ, value, tb)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        if isinstance(kwargs.get("exc_info", (None, None))[1], StoreUnavailable):
            status_code = 503  # a store outage or a full disk: the user's change was not made; try again later
            self.set_status(503)
        reason = {403: "This form has expired or did not come from this site. Go back, reload and try again.",
                  404: "There is no page at this address.", 405: "This page does not accept that method.",
                  503: "The service cannot save changes right now; nothing was changed. Try again in a moment."}
        self.render("error.html", signed_in=self.signed_in, flash=None, status=status_code,
                    message=reason.get(status_code, "Something went wrong on our side. Try again in a moment."))

    def client_address(self) -> str:
        return self.request.remote_ip or "unknown"
