"""``/account/feeds``: the signed-in account's saved feeds: list, create, edit and delete them, and for
each the URLs a SIEM is pointed at (its JSON, and on Pro its TAXII collection and every export format)
with a ready ``curl`` line, each with a copy button.

The forms end in the API's own checks and writes (``server.feed_params``): a value the API refuses is
refused here with the same words, the plan's quota and unique names hold alike, and a feed is looked up
among the signed-in user's feeds only (another account's id is the 404 page).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tornado.web import HTTPError

from config.tiers import TIERS
from server.base import public_base
from server.errors import ApiError
from server.feed_params import (
    TAXII_ACCEPT,
    create_feed,
    feed_links,
    parse_filters,
    parse_name,
    update_feed,
    valid_id,
)
from store.base import NotFound
from store.decay import STATUSES
from store.records import CONFIDENCES, INDUSTRY_TAGS, IOC_TYPES, SEVERITY_LABELS, SOURCE_CATEGORIES, Feed
from web.base import PageHandler

# The filters offered as check boxes (every allowed value) and as comma-separated text (open sets).
CHOICES: dict[str, tuple[str, ...]] = {
    "type": IOC_TYPES,
    "confidence": CONFIDENCES,
    "category": SOURCE_CATEGORIES,
    "industry": INDUSTRY_TAGS,
    "severity": SEVERITY_LABELS,
    "status": STATUSES,
}
TEXTS = ("source", "threat_actor", "min_score")
LABELS = {
    "type": "IOC types",
    "confidence": "Confidence",
    "category": "Source categories",
    "industry": "Sectors",
    "severity": "Severity (highest of the reporting articles)",
    "source": "Reporting feeds",
    "threat_actor": "Threat actors",
    "status": "Status",
    "min_score": "Minimum score (0-100)",
}
PLACEHOLDERS = {"source": "Example News, CISA", "threat_actor": "lazarus, apt28", "min_score": "50"}
KEY_VARIABLE = "$CTIWIRE_KEY"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One URL of a feed as the page shows it: a label, the URL and the ``curl`` line that reads it."""

    kind: str
    label: str
    url: str
    curl: str


def endpoints(feed: Feed, links: dict[str, Any]) -> list[Endpoint]:
    """JSON, TAXII (its objects) and each export, in that order; the curl lines send the key as Bearer."""
    auth = f'-H "Authorization: Bearer {KEY_VARIABLE}"'
    shown = [Endpoint("json", "JSON (IOC list)", links["iocs"], f"curl {auth} '{links['iocs']}'")]
    if "taxii" in links:
        objects = links["taxii"] + "objects/"
        shown.append(
            Endpoint(
                "taxii", "TAXII 2.1 collection", links["taxii"], f"curl {auth} -H 'Accept: {TAXII_ACCEPT}' '{objects}'"
            )
        )
    for fmt, url in links.get("exports", {}).items():
        shown.append(Endpoint(f"export-{fmt}", f"Export: {fmt}", url, f"curl -OJ {auth} '{url}'"))
    return shown


def form_values(handler: PageHandler) -> dict[str, Any]:
    """The filters a feed form sent, by the API's filter names (check boxes as lists, text as typed)."""
    values: dict[str, Any] = {name: handler.get_body_arguments(name) for name in CHOICES}
    values.update({name: handler.get_body_argument(name, "").strip() for name in TEXTS})
    return values


def shown_form(name: str, filters: dict[str, Any]) -> dict[str, Any]:
    """What a form shows: the name, the checked values and the text fields joined back with commas."""
    return {
        "name": name,
        **{k: list(filters.get(k, [])) for k in CHOICES},
        **{k: v if isinstance(v := filters.get(k, ""), str) else ", ".join(v) for k in TEXTS},
    }


class FeedPage(PageHandler):
    """What the feed pages share: the user's own feed by id, and rendering with the form's choices."""

    async def own_feed(self, feed_id: str) -> Feed:
        found = await self.ctx.stores.feeds.get_feed(self.user.id, feed_id.lower()) if valid_id(feed_id) else None
        if found is None:
            raise HTTPError(404)
        return found

    def feed_page(self, template: str, **values: Any) -> None:
        self.page(template, choices=CHOICES, texts=TEXTS, labels=LABELS, PLACEHOLDERS=PLACEHOLDERS,
                  tier=TIERS[self.user.tier], **values)


class FeedsHandler(FeedPage):
    """``GET /account/feeds``: the feeds with their URLs and the create form; ``POST`` creates a feed."""

    async def get(self) -> None:
        await self.list_page(shown_form("", {}))

    async def list_page(self, form: dict[str, Any], error: str | None = None) -> None:
        tier, base = TIERS[self.user.tier], public_base(self.ctx.settings)
        feeds = await self.ctx.stores.feeds.list_feeds(self.user.id)
        rows = [(feed, endpoints(feed, feed_links(feed.id, tier, base))) for feed in feeds]
        self.feed_page("feeds.html", rows=rows, form=form, error=error)

    async def post(self) -> None:
        name, filters = self.get_body_argument("name", ""), form_values(self)
        try:
            feed = await create_feed(
                self.ctx.stores.feeds,
                self.user,
                parse_name(name),
                parse_filters(filters),
                self.ctx.settings.upgrade_url,
            )
        except ApiError as exc:
            self.set_status(400)
            await self.list_page(shown_form(name, filters), exc.message)
            return
        self.flash(f"Feed “{feed.name}” saved.")
        self.redirect("/account/feeds")


class FeedEditHandler(FeedPage):
    """``GET /account/feeds/{id}/edit``: the name and filters; ``POST`` saves them."""

    async def get(self, feed_id: str) -> None:
        feed = await self.own_feed(feed_id)
        self.feed_page("feed_edit.html", feed=feed, form=shown_form(feed.name, feed.filters), error=None)

    async def post(self, feed_id: str) -> None:
        feed = await self.own_feed(feed_id)
        name, filters = self.get_body_argument("name", ""), form_values(self)
        try:
            await update_feed(self.ctx.stores.feeds, feed, parse_name(name), parse_filters(filters))
        except NotFound:
            raise HTTPError(404) from None
        except ApiError as exc:
            self.set_status(400)
            self.feed_page("feed_edit.html", feed=feed, form=shown_form(name, filters), error=exc.message)
            return
        self.flash("Feed saved.")
        self.redirect("/account/feeds")


class FeedDeleteHandler(FeedPage):
    """``POST /account/feeds/{id}/delete``: the feed goes, with its TAXII collection and URLs."""

    async def post(self, feed_id: str) -> None:
        feed = await self.own_feed(feed_id)
        try:
            await self.ctx.stores.feeds.delete_feed(self.user.id, feed.id)
        except NotFound:
            pass  # deleted meanwhile (another tab, the API): the outcome asked for
        self.flash(f"Feed “{feed.name}” deleted.")
        self.redirect("/account/feeds")
