"""Mounts the account web on the application (``application.app``)."""

from __future__ import annotations

from typing import Any

from tornado.web import HTTPError, RedirectHandler, RequestHandler, StaticFileHandler

from server.context import AppContext
from web.account import LandingHandler, SignInHandler, SignOutHandler, SignUpHandler
from web.allowlist import AllowlistDeleteHandler, AllowlistPage
from web.base import STATIC, PageHandler
from web.browse import ArticlePageHandler, ArticlesHandler, IocDownloadHandler, IocsHandler
from web.docs import SWAGGER_UI, DocsHandler
from web.feeds import FeedDeleteHandler, FeedEditHandler, FeedsHandler
from web.insights import DashboardHandler, UsageHandler
from web.keyforms import KeyDeleteHandler, KeyEditHandler, KeyRotateHandler
from web.keys import KeyActionHandler, KeysHandler
from web.profile import DeleteAccountHandler, PasswordHandler, SettingsHandler, SignOutEverywhereHandler
from web.recovery import ForgotHandler, ResendHandler, ResetHandler, VerifyHandler
from web.search import SearchHandler
from web.webhooks import WebhookActionHandler, WebhooksHandler

REGEX_SYNTAX = set("\\.^$*+?{}[]()|")


class AssetHandler(StaticFileHandler):
    """Static files with the pages' hardening headers."""

    def set_default_headers(self) -> None:
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")


class MissingPageHandler(PageHandler):
    """Any other ``/account/...`` address: the 404 page in the site's layout, for every method (a browser
    shows a page, not the API's JSON envelope)."""

    needs_user = False

    async def prepare(self) -> None:
        await super().prepare()
        raise HTTPError(404)

    def check_xsrf_cookie(self) -> None:
        """Nothing is changed here, so a POST gets the 404 rather than a form error."""


def next_pages(rules: list[Any]) -> frozenset[str]:
    """The addresses sign-in may lead to: the fixed paths of pages that ask for a session and answer GET."""
    return frozenset(pattern for pattern, handler, *_ in rules
                     if getattr(handler, "needs_user", False) and handler.get is not RequestHandler.get
                     and not REGEX_SYNTAX & set(pattern))


def routes(ctx: AppContext) -> list[Any]:
    page = {"ctx": ctx}
    rules = pages(page)
    signin = {**page, "next_pages": next_pages(rules)}
    return [
        (r"/account/signin", SignInHandler, signin),
        *rules,
        (r"/static/(.*)", AssetHandler, {"path": str(STATIC)}),
        (r"/api/docs/assets/(.*)", AssetHandler, {"path": str(SWAGGER_UI)}),
        (r"/account/?", RedirectHandler, {"url": "/account/keys", "permanent": False}),
        (r"/account/.*", MissingPageHandler, page),  # after every page of the account web
    ]


def pages(page: dict[str, Any]) -> list[Any]:
    """The rules of the pages (all but sign-in, which ``routes`` adds with the pages it may lead to)."""
    return [
        (r"/", LandingHandler, page),
        (r"/account/signup", SignUpHandler, page),
        (r"/account/signout", SignOutHandler, page),
        (r"/account/signout-everywhere", SignOutEverywhereHandler, page),
        (r"/account/settings", SettingsHandler, page),
        (r"/account/password", PasswordHandler, page),
        (r"/account/delete", DeleteAccountHandler, page),
        (r"/account/forgot", ForgotHandler, page),
        (r"/account/reset", ResetHandler, page),
        (r"/account/verify", VerifyHandler, page),
        (r"/account/verify/resend", ResendHandler, page),
        (r"/account/keys", KeysHandler, page),
        (r"/account/keys/([^/]+)/(deactivate|activate)", KeyActionHandler, page),
        (r"/account/keys/([^/]+)/delete", KeyDeleteHandler, page),
        (r"/account/keys/([^/]+)/rotate", KeyRotateHandler, page),
        (r"/account/keys/([^/]+)/edit", KeyEditHandler, page),
        (r"/account/feeds", FeedsHandler, page),
        (r"/account/allowlist", AllowlistPage, page),
        (r"/account/allowlist/([^/]+)/delete", AllowlistDeleteHandler, page),
        (r"/account/feeds/([^/]+)/edit", FeedEditHandler, page),
        (r"/account/feeds/([^/]+)/delete", FeedDeleteHandler, page),
        (r"/account/webhooks", WebhooksHandler, page),
        (r"/account/webhooks/([^/]+)/(resume|delete)", WebhookActionHandler, page),
        (r"/account/usage", UsageHandler, page),
        (r"/account/dashboard", DashboardHandler, page),
        (r"/api/docs/?", DocsHandler, page),
        (r"/search", SearchHandler, page),
        (r"/articles", ArticlesHandler, page),
        (r"/articles/([^/]+)", ArticlePageHandler, page),
        (r"/iocs", IocsHandler, page),
        (r"/iocs/download/([a-z]+)", IocDownloadHandler, page),
    ]
