"""Mounts the account web (issue 14) on the application (``application.app``)."""

from __future__ import annotations

from typing import Any

from tornado.web import StaticFileHandler

from server.context import AppContext
from web.account import LandingHandler, SignInHandler, SignOutHandler, SignUpHandler
from web.base import STATIC
from web.docs import SWAGGER_UI, DocsHandler
from web.insights import DashboardHandler, UsageHandler
from web.keys import KeyActionHandler, KeysHandler


class AssetHandler(StaticFileHandler):
    """Static files with the pages' hardening headers."""

    def set_default_headers(self) -> None:
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("X-Frame-Options", "DENY")


def routes(ctx: AppContext) -> list[Any]:
    page = {"ctx": ctx}
    return [
        (r"/", LandingHandler, page),
        (r"/account/signup", SignUpHandler, page),
        (r"/account/signin", SignInHandler, page),
        (r"/account/signout", SignOutHandler, page),
        (r"/account/keys", KeysHandler, page),
        (r"/account/keys/([^/]+)/(delete|deactivate|activate)", KeyActionHandler, page),
        (r"/account/usage", UsageHandler, page),
        (r"/account/dashboard", DashboardHandler, page),
        (r"/api/docs/?", DocsHandler, page),
        (r"/static/(.*)", AssetHandler, {"path": str(STATIC)}),
        (r"/api/docs/assets/(.*)", AssetHandler, {"path": str(SWAGGER_UI)}),
    ]
