"""Which live-feed events a consumer wants: one matcher for the stream (GET /api/v1/stream) and webhooks.

The server parses the request's filter parameters into a :class:`StreamFilter` (server.stream_params);
a webhook keeps the parsed filter as a document (``to_doc``) so a worker, which never imports the
server, matches events with the same code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from store.ports.events import EVENT_KINDS
from store.query import IocFilters
from store.records import severity_label


@dataclass(frozen=True, slots=True)
class StreamFilter:
    """Which events one stream delivers; an empty tuple (or None) filters nothing."""

    kinds: tuple[str, ...] = EVENT_KINDS
    sources: tuple[str, ...] = ()
    article_categories: tuple[str, ...] = ()
    severity_labels: tuple[str, ...] = ()
    min_severity: float | None = None
    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    source_categories: tuple[str, ...] = ()
    industries: tuple[str, ...] = ()
    feed: IocFilters | None = None  # a saved feed's filters, checked on IOC records besides the others
    # IOC records whose value is on a warninglist are left out unless asked for, as in every IOC list.
    include_warninglisted: bool = False

    def matches(self, kind: str, data: Mapping[str, Any]) -> bool:
        if kind not in self.kinds:
            return False
        return self._article(data) if kind == "article" else self._ioc(data)

    def _article(self, a: Mapping[str, Any]) -> bool:
        return (
            _within(self.sources, a.get("source_name"))
            and _within(self.article_categories, a.get("category"))
            and _within(self.severity_labels, severity_label(float(a.get("severity_score") or 0)))
            and (self.min_severity is None or float(a.get("severity_score") or 0) >= self.min_severity)
        )

    def _ioc(self, i: Mapping[str, Any]) -> bool:
        source = i.get("source") or {}
        return (
            _within(self.types, i.get("type"))
            and _within(self.confidences, i.get("confidence"))
            and _within(self.source_categories, source.get("category"))
            and _overlaps(self.industries, i.get("industries"))
            and _overlaps(self.sources, i.get("sources"))
            and (self.feed is None or self.feed.matches(i))
            and (self.include_warninglisted or not i.get("warninglisted"))
        )

    def to_doc(self) -> dict[str, Any]:
        """The fields that filter something (a stored webhook's ``filters``); a feed as its parameter lists."""
        default = asdict(StreamFilter())
        doc = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items() if v != default[k]}
        if self.feed is not None:
            doc["feed"] = self.feed.as_params()
        return doc

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> StreamFilter:
        names = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in doc.items() if k in names}
        if isinstance(values.get("feed"), Mapping):
            values["feed"] = IocFilters.from_params(dict(values["feed"]))
        return cls(**values)


def _within(allowed: tuple[str, ...], value: Any) -> bool:
    return not allowed or value in allowed


def _overlaps(allowed: tuple[str, ...], values: Sequence[str] | None) -> bool:
    return not allowed or any(v in allowed for v in values or ())
