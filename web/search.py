"""``/search``: one box for an indicator (defanged forms included), a CVE, an ATT&CK technique or a
threat actor's name.

An indicator shows what ``GET /api/v1/lookup`` answers (``exporters.lookup``: the same store, the same
IOC and related-article lookbacks): sources, first and last seen, the risk score, related articles and hunting
queries with copy buttons. Fields a later enrichment adds to that payload (a verdict, a status,
warninglist hits) are shown when present. A CVE, a technique or an actor also lists its articles through
the API's article filters (``cve_text_search``, ``mitre_technique``, ``threat_actor``).
"""

from __future__ import annotations

import re
from typing import Any

from exporters.lookup import IndicatorError, lookup, read_indicator
from server.errors import ApiError
from server.params import Params
from server.windows import lookup_window
from store.records import utcnow
from web.reads import ARTICLE_PAGE, ReadPage, article_page

MAX_QUERY = 2048
# What the box takes as a threat actor's name when it is no indicator: a word, then letters, digits,
# spaces and the punctuation of group names (APT29, Lazarus Group, TA505, Scattered-Spider).
ACTOR_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 ._\-]{1,63}$")
# The article filter of the API that lists a subject's articles.
ARTICLE_FILTERS = {"cve": ("cve_text_search", ""), "mitre-attack": ("mitre_technique", "technique"),
                   None: ("threat_actor", "threat actor")}


class SearchHandler(ReadPage):
    """``GET /search?q=...``; an empty box shows the form only (and reads, so charges, nothing)."""

    async def get(self) -> None:
        q = self.get_query_argument("q", "").strip()
        values: dict[str, Any] = {"q": q, "result": None, "articles": None, "about": None, "error": None}
        if not q:
            self.page("search.html", **values)
            return
        try:
            ioc_type, value = read_indicator(q[:MAX_QUERY])
        except IndicatorError:
            if len(q) > MAX_QUERY or not ACTOR_NAME.match(q):
                self.set_status(400)
                shown = q if len(q) <= 80 else q[:80] + "…"
                self.page("search.html", **{**values, "error": f"“{shown}” is not an indicator (IP, domain, URL, "
                                            "hash, e-mail or CVE), an ATT&CK technique such as T1566, or a "
                                            "threat actor's name."})
                return
            ioc_type, value = None, q
        if not await self.charge_read():
            return
        if ioc_type is not None:
            now = utcnow()
            values["result"] = await lookup(self.ctx.stores, ioc_type, value, lookup_window(self.tier, now), now)
        if ioc_type in ARTICLE_FILTERS:
            await self._articles(values, ioc_type, value)
        self.page("search.html", **values)

    async def _articles(self, values: dict[str, Any], ioc_type: str | None, value: str) -> None:
        name, label = ARTICLE_FILTERS[ioc_type]
        try:
            request = self.article_request(Params({name: [value.encode()], "limit": [str(ARTICLE_PAGE).encode()]}))
        except ApiError as exc:  # e.g. a CVE id the article filter's stricter pattern refuses
            values["error"] = exc.message
            return
        values["about"] = (label, value, name)
        values["articles"], _ = await article_page(self.ctx.articles, request)
