"""The base of the pages that read the feed (``/search``, ``/articles``, ``/iocs``): the account's tier,
its budget, and the API's parameter parsers.

Web reads are charged to the account: every page that reads the store takes its cost (1; a download its
format's multiplier, ``exporters.registry.format_cost``) from a per-user web budget (``web:<user id>``) in
the API's rate limiter, with the tier's per-minute and per-day limits. A budget of its own rather than a
key's: an account may have no key (a new Free account) or several, and browsing must not spend the budget
of the key a SIEM runs on. The usage page shows it beside the keys.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from config.tiers import TIERS, Tier
from server.article_params import ArticleRequest, parse_article_request
from server.errors import ApiError
from server.params import Params
from store.base import Position
from store.ports import ArticleStore
from store.records import Article, utcnow
from web.base import PageHandler

ARTICLE_PAGE = 25  # rows of an article list in the browser (the API's JSON page holds up to the tier's cap)


def web_budget(user_id: str) -> str:
    """The rate limiter's id of an account's web budget (never a key id: those are UUIDs)."""
    return f"web:{user_id}"


class ReadPage(PageHandler):
    """A signed-in page that reads the feed within the account's tier."""

    @property
    def tier(self) -> Tier:
        return TIERS[self.user.tier]

    async def charge_read(self, cost: int = 1) -> bool:
        """Take ``cost`` from the account's web budget; False (and a 429 page) when it is spent."""
        verdict = await self.ctx.limiter.charge(web_budget(self.user.id), self.tier, cost)
        if verdict.allowed:
            return True
        self.set_status(429)
        self.set_header("Retry-After", str(max(verdict.reset - int(time.time()), 1)))
        self.render("error.html", signed_in=self.signed_in, flash=None, status=429, message=(
            f"Your {self.tier.name.capitalize()} plan allows {verdict.exceeded_limit:,} reads per "
            f"{verdict.exceeded} in the browser, and they are used up. Try again in a moment."))
        return False

    def page(self, template: str, **values: Any) -> None:
        super().page(template, tier=self.tier, **values)

    def params(self, drop: Iterable[str] = (), **given: str) -> Params:
        """The query string as the API's parsers read it, without ``drop`` and with ``given`` set. A form's
        empty field means "no filter" (the API refuses a blank value, which a person never types on purpose)."""
        args = {name: values for name, values in self.request.query_arguments.items()
                if name not in set(drop) and any(value.strip() for value in values)}
        args.update({name: [value.encode()] for name, value in given.items()})
        return Params(args)

    def article_request(self, params: Params) -> ArticleRequest:
        """The API's parser of GET /api/v1/articles on ``params`` (raises its BadRequest)."""
        return parse_article_request(params, self.tier, utcnow(), self.ctx.settings.secret_key)

    def refuse(self, template: str, exc: ApiError, **values: object) -> None:
        """``template`` with the parser's message in place of results (400: the filters are wrong)."""
        self.set_status(400)
        self.page(template, error=exc.message, **values)



async def article_page(store: ArticleStore, request: ArticleRequest) -> tuple[list[Article], Position | None]:
    """A page of ``request``'s articles and, when another page follows, its last position (as the API's
    JSON page: one read of ``limit + 1`` rows)."""
    q = request.query
    rows = [a async for batch in store.iter_articles(replace(q, limit=q.limit + 1)) for a in batch]
    end = (getattr(rows[q.limit - 1], q.sort_field), rows[q.limit - 1].id) if len(rows) > q.limit else None
    return rows[:q.limit], end

