"""Format id -> exporter class: an explicit table, no import-time magic (ARCHITECTURE.md, "Patterns")."""

from __future__ import annotations

from config.tiers import ARTICLE_FORMAT_COSTS
from exporters.base import Exporter
from exporters.blocklist import BlocklistExporter
from exporters.cef import CefExporter
from exporters.ecs import EcsExporter
from exporters.misp import MispExporter
from exporters.openioc import OpenIocExporter
from exporters.rpz import RpzExporter
from exporters.sigma import SigmaExporter
from exporters.stix import StixExporter
from exporters.suricata import SuricataExporter


class UnknownFormat(KeyError):
    """An export format no exporter is registered for (a KeyError, so mapping-style callers still work)."""

    def __init__(self, fmt: str) -> None:
        super().__init__(fmt)
        self.format = fmt

    def __str__(self) -> str:
        return f"unknown export format {self.format!r}; known: {', '.join(EXPORTERS)}"


EXPORTERS: dict[str, type[Exporter]] = {
    "stix": StixExporter,
    "misp": MispExporter,
    "cef": CefExporter,
    "openioc": OpenIocExporter,
    "sigma": SigmaExporter,
    "blocklist": BlocklistExporter,
    "rpz": RpzExporter,
    "suricata": SuricataExporter,
    "ecs": EcsExporter,
}


def get_exporter(fmt: str) -> type[Exporter]:
    """The exporter class for ``fmt``; raises :class:`UnknownFormat` for anything else."""
    try:
        return EXPORTERS[fmt]
    except KeyError:
        raise UnknownFormat(fmt) from None


def format_cost(fmt: str) -> int:
    """Rate-limit cost of one request in format ``fmt``: an article format's, an IOC export's own, else 1."""
    return EXPORTERS[fmt].cost if fmt in EXPORTERS else ARTICLE_FORMAT_COSTS.get(fmt, 1)


def format_costs() -> dict[str, int]:
    """Every format's cost, for the OpenAPI description."""
    return {**ARTICLE_FORMAT_COSTS, **{fmt: cls.cost for fmt, cls in EXPORTERS.items()}}
