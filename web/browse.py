"""``/articles`` (with an article's own page) and ``/iocs`` (with its downloads): the API's lists in the
browser, parsed by the API's own parsers (``server.article_params``, ``server.ioc_params``), so the
filters, the tier's lookbacks and caps and the errors are the API's. Filters are GET forms.

Articles page by the API's signed keyset cursor; IOCs by offset, as ``GET /api/v1/iocs`` does. A
download is the API's export (``server.exports``: the same request parsing, plan and scope gate, cache
and build), of the filters on screen at the tier's row cap.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from config.tiers import Tier
from exporters.precompute import tier_windows
from exporters.registry import EXPORTERS, format_cost
from server.article_params import next_cursor
from server.cached_responses import write_entry
from server.errors import ApiError
from server.exports import build_export, export_allowed, export_request
from server.ioc_params import parse_ioc_request
from server.windows import within_lookback
from store.base import NotFound
from store.decay import STATUSES, clock, score
from store.exclusions import account_exclusions
from store.query import ARTICLE_SORTS
from store.records import (
    CATEGORIES,
    CONFIDENCES,
    INDUSTRY_TAGS,
    IOC_TYPES,
    SEVERITY_LABELS,
    SOURCE_CATEGORIES,
    iso,
    utcnow,
)
from web.reads import ARTICLE_PAGE, ReadPage, article_page

IOC_PAGE = 50
# Parameters of the API the pages set themselves (a page is always a JSON page of the web's size).
ARTICLE_FIXED = ("format", "fields", "expand", "count_strategy", "limit", "offset", "api_key")
IOC_FIXED = ("since", "limit", "api_key", "window")
# (value, label) of each select; the sorts are named as a person says them.
SORT_LABELS = {"published:desc": "Newest first", "published:asc": "Oldest first", "modified:desc": "Recently updated",
               "severity:desc": "Most severe", "engagement:desc": "Most discussed"}
ARTICLE_CHOICES = {"category": [(c, c) for c in CATEGORIES], "severity": [(s, s) for s in SEVERITY_LABELS],
                   "sort": [(s, SORT_LABELS.get(s, s)) for s in ARTICLE_SORTS]}
IOC_CHOICES = {name: [(v, v) for v in values] for name, values in (
    ("type", IOC_TYPES), ("confidence", CONFIDENCES), ("category", SOURCE_CATEGORIES), ("industry", INDUSTRY_TAGS),
    ("status", STATUSES))}
# The IOCs page shows active records unless the status select says otherwise ("any": every status), as the
# API's lists and exports do (store.query.DEFAULT_STATUSES).
DEFAULT_STATUS = "active"


class ArticlesHandler(ReadPage):
    """``GET /articles``: the newest articles of the tier's lookback, filtered as the API filters them."""

    async def get(self) -> None:
        values: dict[str, Any] = {"args": self._args(), "choices": ARTICLE_CHOICES, "rows": [], "next_url": None,
                                  "first_url": None, "error": None}
        try:
            request = self.article_request(self.params(ARTICLE_FIXED, limit=str(ARTICLE_PAGE)))
        except ApiError as exc:
            self.refuse("articles.html", exc, **{k: v for k, v in values.items() if k != "error"})
            return
        if not await self.charge_read():
            return
        values["rows"], end = await article_page(self.ctx.articles, request)
        if end is not None:
            token = next_cursor(self.ctx.settings.secret_key, request.query.sort, end)
            values["next_url"] = "/articles?" + urlencode([*_pairs(values["args"], "cursor"), ("cursor", token)])
        if "cursor" in values["args"]:
            values["first_url"] = "/articles?" + urlencode(_pairs(values["args"], "cursor"))
        self.page("articles.html", **values)

    def _args(self) -> dict[str, str]:
        return {name: self.get_query_argument(name) for name in self.request.query_arguments
                if name not in ARTICLE_FIXED}


class ArticlePageHandler(ReadPage):
    """``GET /articles/{id}``: one article with its IOCs; outside the tier's lookback it does not exist."""

    async def get(self, article_id: str) -> None:
        try:
            article = await self.ctx.articles.get_article(str(uuid.UUID(article_id)))
        except (ValueError, NotFound):
            article = None
        if article is None or not within_lookback(article.published_at, self.tier.article_lookback_days, utcnow()):
            self.send_error(404)
            return
        if not await self.charge_read():
            return
        self.page("article.html", article=article)


class IocsHandler(ReadPage):
    """``GET /iocs``: the tier's IOCs with the list's filters, a window, pages and the downloads."""

    async def get(self) -> None:
        args, windows = self._args(), tier_windows(self.tier)
        asked = args.get("window", "")
        window = asked if asked in windows else next(iter(windows))  # the most recent day by default
        args["window"] = window
        status = args.setdefault("status", DEFAULT_STATUS)
        now = clock(utcnow())
        values: dict[str, Any] = {"args": args, "choices": IOC_CHOICES, "windows": windows, "rows": [], "total": 0,
                                  "offset": 0, "size": IOC_PAGE, "formats": _formats(self.tier), "error": None,
                                  "download": "", "life": lambda ioc: (score(ioc, now), ioc.status(now))}
        since = iso(utcnow() - timedelta(days=windows[window]))
        given = {"since": since, **({"status": status} if status else {})}
        try:
            query = parse_ioc_request(self.params(IOC_FIXED, **given), self.tier, now, IOC_PAGE).query
        except ApiError as exc:
            self.refuse("iocs.html", exc, **{k: v for k, v in values.items() if k != "error"})
            return
        if not await self.charge_read():
            return
        values["rows"] = [ioc async for batch in self.ctx.iocs.iter_iocs(query) for ioc in batch]
        values["total"], values["offset"] = await self.ctx.iocs.count_iocs(query), query.offset
        values["download"] = urlencode(_pairs(args, "offset"))
        self.page("iocs.html", **values)

    def _args(self) -> dict[str, str]:
        return {name: self.get_query_argument(name) for name in self.request.query_arguments
                if name not in IOC_FIXED or name == "window"}


class IocDownloadHandler(ReadPage):
    """``GET /iocs/download/{format}``: the API's export of the filters on screen, as a file."""

    async def get(self, fmt: str) -> None:
        tier = self.tier
        if fmt not in EXPORTERS:
            self.send_error(404)
            return
        if not export_allowed(tier, fmt):
            self.set_status(403)
            self.render("error.html", signed_in=self.signed_in, flash=None, status=403, message=(
                f"Downloads are a Pro feature: the {tier.name.capitalize()} plan reads IOCs on the IOCs page "
                "and through the API."))
            return
        try:
            request, _ = export_request(self.params(("since", "offset", "limit", "api_key"),
                                                    limit=str(tier.ioc_results_max)), tier, fmt)
        except ApiError as exc:
            self.set_status(400)
            self.render("error.html", signed_in=self.signed_in, flash=None, status=400, message=exc.message)
            return
        if not await self.charge_read(format_cost(fmt)):
            return
        exclusions = await account_exclusions(self.ctx.stores, self.user.id)  # as the API's exports
        entry, status = await build_export(self.ctx, replace(request, exclusions=exclusions))
        await write_entry(self, entry, status, attachment=True, fmt=fmt)


def _formats(tier: Tier) -> list[tuple[str, str, bool]]:
    """(format, its name, whether the plan may download it) of every export."""
    return [(fmt, exporter.summary, export_allowed(tier, fmt)) for fmt, exporter in EXPORTERS.items()]


def _pairs(args: dict[str, str], drop: str) -> list[tuple[str, str]]:
    return [(name, value) for name, value in args.items() if name != drop and value]
