"""The source list: the shipped ``config/sources.yaml`` or the file named by ``CTIWIRE_SOURCES_FILE``.

A bad entry is a clear error naming the entry at start-up, never a crash later,
so every field is checked here, once, before anything is fetched.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from config.settings import Settings, yaml_problem

SHIPPED = Path(__file__).with_name("sources.yaml")
SOURCE_TYPES = ("rss", "community")
SOURCE_CATEGORIES = ("government", "commercial", "community")
_FIELDS = {"name", "homepage", "feed_url", "source_type", "source_tier", "category", "enabled"}


class SourceConfigError(ValueError):
    """The source file is unreadable or one entry is invalid (the message names the entry)."""


@dataclass(frozen=True, slots=True)
class SourceConfig:
    """One configured feed."""

    name: str
    homepage: str
    feed_url: str
    source_type: str = "rss"
    source_tier: int = 2
    category: str = "commercial"
    enabled: bool = True


def _url(entry: str, field: str, value: Any) -> str:
    parts = urlsplit(str(value))
    if not isinstance(value, str) or parts.scheme not in ("http", "https") or not parts.netloc:
        raise SourceConfigError(f"{entry}: {field} must be an http(s) URL, got {value!r}")
    return value


def _choice(entry: str, field: str, value: Any, allowed: tuple[Any, ...]) -> Any:
    if value not in allowed:
        raise SourceConfigError(f"{entry}: {field} must be one of {', '.join(map(str, allowed))}, got {value!r}")
    return value


def parse_entry(index: int, raw: Any) -> SourceConfig:
    """One YAML entry, checked; ``index`` names it when it has no usable name."""
    if not isinstance(raw, dict):
        raise SourceConfigError(f"source #{index + 1}: expected a mapping, got {type(raw).__name__}")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SourceConfigError(f"source #{index + 1}: 'name' is required")
    entry = f"source #{index + 1} ({name!r})"
    unknown = set(raw) - _FIELDS
    if unknown:
        raise SourceConfigError(f"{entry}: unknown field(s) {', '.join(sorted(unknown))}")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise SourceConfigError(f"{entry}: enabled must be true or false, got {enabled!r}")
    return SourceConfig(
        name=name.strip(), homepage=_url(entry, "homepage", raw.get("homepage")),
        feed_url=_url(entry, "feed_url", raw.get("feed_url")),
        source_type=_choice(entry, "source_type", raw.get("source_type", "rss"), SOURCE_TYPES),
        source_tier=_choice(entry, "source_tier", raw.get("source_tier", 2), (1, 2, 3, 4)),
        category=_choice(entry, "category", raw.get("category", "commercial"), SOURCE_CATEGORIES),
        enabled=enabled,
    )


def parse_sources(text: str, origin: str) -> list[SourceConfig]:
    """Every entry of a sources document; names must be unique (they are the `source` filter's values)."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SourceConfigError(f"{origin}: {yaml_problem(exc)}") from exc
    raw = document.get("sources") if isinstance(document, dict) else None
    if not isinstance(raw, list) or not raw:
        raise SourceConfigError(f"{origin}: expected a non-empty 'sources' list")
    try:
        sources = [parse_entry(i, item) for i, item in enumerate(raw)]
    except SourceConfigError as exc:
        raise SourceConfigError(f"{origin}: {exc}") from None  # the file as well as the entry
    seen: set[str] = set()
    for source in sources:
        if source.name in seen:
            raise SourceConfigError(f"{origin}: source {source.name!r} is listed twice")
        seen.add(source.name)
    return sources


def load_sources(settings: Settings) -> list[SourceConfig]:
    """The configured sources; SourceConfigError when the file is missing or an entry is bad."""
    return read_sources(settings.sources_file or SHIPPED)


def read_sources(path: Path) -> list[SourceConfig]:
    """The sources of the file at ``path``, every entry checked."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceConfigError(f"{path}: cannot read the source list: {exc.strerror}") from exc
    return parse_sources(text, str(path))
