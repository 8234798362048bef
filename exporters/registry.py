"""Format id -> exporter class: an explicit table, no import-time magic (ARCHITECTURE.md, "Patterns")."""

from __future__ import annotations

from exporters.base import Exporter
from exporters.cef import CefExporter
from exporters.misp import MispExporter
from exporters.openioc import OpenIocExporter
from exporters.sigma import SigmaExporter
from exporters.stix import StixExporter


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
}


def get_exporter(fmt: str) -> type[Exporter]:
    """The exporter class for ``fmt``; raises :class:`UnknownFormat` for anything else."""
    try:
        return EXPORTERS[fmt]
    except KeyError:
        raise UnknownFormat(fmt) from None
