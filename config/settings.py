"""One typed settings object, loaded once: defaults < YAML file < ``CTIWIRE_*`` environment.

The object is passed down explicitly (handlers get it through ``initialize``); nothing reads the
environment after start-up.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints
from urllib.parse import urlsplit

import yaml

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_networks(text: str) -> tuple[Network, ...]:
    """``10.0.0.5, 10.1.0.0/16, ::1`` (a setting's value) -> networks; a malformed entry is a ValueError."""
    return tuple(ipaddress.ip_network(item.strip(), strict=False) for item in text.split(",") if item.strip())


SIGNUP_MODES = ("open", "closed", "verify")
SMTP_SCHEMES = ("smtp", "smtps")


class SettingsError(ValueError):
    """A setting is missing or malformed; the message names it."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Every knob of the service. Field ``x`` is read from ``CTIWIRE_X`` or key ``x`` of the YAML file."""

    data_dir: Path = Path("var")
    host: str = "127.0.0.1"
    port: int = 8000
    processes: int = 1
    mongodb_uri: str | None = None
    mongodb_db: str = "ctiwire"
    # The SQLite writer's page cache while seeding or importing in bulk (MiB); the serving connections keep
    # their 16 MiB (store.sqlite.backend.SqliteStore.bulk).
    sqlite_bulk_cache_mb: int = 256
    redis_url: str | None = None
    secret_key: str = ""
    # The service's public address (https://...): Secure cookies when https.
    public_url: str | None = None
    cookie_secure: bool = False
    # Proxies whose X-Real-IP / X-Forwarded-For / X-Scheme are believed (comma-separated addresses or networks).
    trusted_proxies: str = ""
    # Account-web sessions end after this long without a request, and this long after sign-in.
    session_idle_minutes: int = 120
    session_max_hours: int = 24
    upgrade_url: str = "https://ctiwire.io/pricing"
    # Who may create an account on the account web: open (anyone, throttled), verify (anyone, but keys only
    # once the e-mail's link was followed) or closed (the CLI only).
    signup: str = "open"
    # Where account mail goes: smtp(s)://user:password@host:port; unset, each message is an .eml file in
    # data_dir/outbox/ (store.mail).
    smtp_url: str | None = None
    # Multiplies the sign-up throttles (per address and in total): benchmarks sign up without their 429s.
    signup_limit_scale: int = 1
    ingest: bool = False
    sources_file: Path | None = None
    seed_articles: int = 5000
    log_level: str = "INFO"
    log_format: str = "text"  # or json: one object a line (application/logs.py)
    # GET /metrics beyond loopback: these networks (comma-separated), or this bearer token.
    metrics_allow: str = ""
    metrics_token: str = ""
    cache_enabled: bool = True
    # Multiplies every tier's request budgets: load tests and benchmarks keep the limiter's work without its 429s.
    rate_limit_scale: int = 1
    # How often each server process adds its requests and 429s per key to the usage history (store.usage).
    usage_flush_seconds: float = 10.0
    cache_max_entries: int = 256
    # 64 MiB: the embedded server's memory stays about the same from thousands of articles to a year's; a
    # precomputed export that no longer fits is built again on its next request.
    cache_max_bytes: int = 64 * 1024 * 1024
    cache_ttl_seconds: int = 3600
    on_demand_ttl_seconds: int = 300
    precompute_interval_seconds: int = 900
    ingest_interval_seconds: int = 1800
    stream_chunk_bytes: int = 128 * 1024
    # The live feed (GET /api/v1/stream): events kept for resuming (days, at least 1), the comment line
    # that keeps idle connections open through proxies, the events one connection may fall behind by
    # before it is sent ``overflow`` and closed (at least the 100 its process reads from the log at a time),
    # and how often a process polls an SQLite event log.
    stream_retention_days: int = 7
    stream_keepalive_seconds: float = 15.0
    stream_buffer_events: int = 1000
    stream_poll_seconds: float = 0.5
    # Webhooks: receivers on loopback, private, link-local or metadata addresses are refused unless this is
    # set (tests, receivers on one's own network); the first retry's wait, doubling up to an hour; the
    # failures in a row after which a webhook is paused (32: over a day of retries); how often deliveries run.
    webhook_allow_private: bool = False
    webhook_backoff_seconds: float = 30.0
    webhook_max_failures: int = 32
    webhook_interval_seconds: float = 5.0
    # Distinct accounts whose false-positive reports revoke an indicator for everyone (POST /api/v1/sightings).
    false_positive_quorum: int = 3
    task_time_limit_seconds: int = 900
    # Redelivery of a task whose worker died as a whole: a little above the longest build (task_time_limit,
    # 900 s), not Redis's default hour.
    task_visibility_timeout_seconds: int = 1200
    # The indicator score (README, "Indicator score and lifecycle"; store.decay): the score below which an
    # indicator is expired, and the half-life of each kind of value in days.
    decay_threshold: float = 25.0
    decay_half_life_address_days: float = 10.0
    decay_half_life_name_days: float = 30.0
    decay_half_life_file_days: float = 180.0
    decay_half_life_vulnerability_days: float = 365.0
    # Fault injection for the worker-kill tests: a pause between batches of an export build.
    build_delay_ms: int = 0

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "ctiwire.sqlite3"

    @property
    def backend_name(self) -> str:
        return "mongodb" if self.mongodb_uri else "sqlite"

    @property
    def embedded(self) -> bool:
        """The embedded default (neither MongoDB nor Redis): the only configuration with demo accounts."""
        return not self.mongodb_uri and not self.redis_url

    @property
    def decay_half_lives(self) -> tuple[float, ...]:
        return (self.decay_half_life_address_days, self.decay_half_life_name_days, self.decay_half_life_file_days,
                self.decay_half_life_vulnerability_days)

    @property
    def cache_name(self) -> str:
        return "redis" if self.redis_url else "memory"

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)

    def __post_init__(self) -> None:
        if not 0 < self.decay_threshold < 100 or min(self.decay_half_lives) <= 0:
            raise SettingsError("settings 'decay_*': the threshold lies between 0 and 100, half-lives above 0 days")
        if self.signup not in SIGNUP_MODES:
            raise SettingsError(f"setting 'signup': {self.signup!r} is not one of {', '.join(SIGNUP_MODES)}")


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _boolean(text: str) -> bool:
    if text.lower() not in _TRUE | _FALSE:
        raise ValueError(text)
    return text.lower() in _TRUE


# The types a setting may have. A field of any other type is refused when the settings are first read
# (SettingsError naming it), never passed through as a string.
CONVERTERS: dict[type, Callable[[str], Any]] = {bool: _boolean, int: int, float: float, str: str, Path: Path}


def field_types(cls: type) -> dict[str, tuple[type, bool]]:
    """Each field of the settings dataclass ``cls``: its type and whether it may be None."""
    hints = get_type_hints(cls)
    types = {}
    for f in fields(cls):
        hint = hints[f.name]
        union = get_origin(hint) in (Union, UnionType)
        kinds = [a for a in get_args(hint) if a is not type(None)] if union else [hint]
        if len(kinds) != 1 or kinds[0] not in CONVERTERS:
            raise SettingsError(f"setting {f.name!r}: type {hint} has no converter")
        types[f.name] = (kinds[0], union and type(None) in get_args(hint))
    return types


def _coerce(name: str, kind: type, optional: bool, raw: Any) -> Any:
    """Turn a YAML or env value into the field's type; a bad value is a SettingsError naming it."""
    if raw is None or (optional and str(raw).strip() == ""):
        return None
    if isinstance(raw, kind) and not (kind is int and isinstance(raw, bool)):
        return raw
    text = str(raw).strip()
    try:
        return CONVERTERS[kind](text)
    except ValueError as exc:
        raise SettingsError(f"setting {name!r}: cannot read {text!r} as {kind.__name__}") from exc


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line (PyYAML's own message spans several, quoting the document)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"not valid YAML: {getattr(exc, 'problem', None) or type(exc).__name__}{where}"


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise SettingsError(f"settings file {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise SettingsError(f"settings file {path}: {yaml_problem(exc)}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"settings file {path}: expected a mapping at the top level")
    return data


# RFC 1123 host name labels; the last label is not all digits (RFC 3696 2), so 999.1.1.1 is no host name.
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMATS = ("text", "json")


def check_port(port: int) -> int:
    """1-65535. Port 0 (any free port the kernel picks) is refused: clients could not know where to connect."""
    if not 1 <= port <= 65535:
        raise ValueError(f"{port} is not a port; allowed 1-65535 (0, any free port, is not useful for a service)")
    return port


def _host(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        labels = host.removesuffix(".").split(".")
        if len(host) <= 253 and all(_LABEL.fullmatch(label) for label in labels) and not labels[-1].isdigit():
            return host
    raise ValueError(f"{host!r} is not a host; allowed an IP address (127.0.0.1, 0.0.0.0, ::) or a host name")


def _data_dir(path: Path) -> Path:
    """Created when missing; a file written and removed proves it writable (os.access lies for root)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise ValueError(f"{str(path)!r} is not a writable directory ({exc.strerror})") from None
    return path


def _one_of(allowed: tuple[str, ...], what: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        for choice in allowed:
            if value.lower() == choice.lower():
                return choice
        raise ValueError(f"{value!r} is not a {what}; allowed {', '.join(allowed)}")
    return check


def _public_url(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    if url is not None and (parts.scheme not in ("http", "https") or not parts.hostname):
        raise ValueError(f"{url!r} is not a public URL; allowed http(s)://host[:port][/path]")
    return url


def _smtp_url(url: str | None) -> str | None:
    parts = urlsplit(url or "")
    if url is not None and (parts.scheme not in SMTP_SCHEMES or not parts.hostname):
        shown = url.replace(f":{parts.password}@", ":***@") if parts.password else url  # never echo a password
        raise ValueError(f"{shown!r} is not an SMTP URL; allowed smtp://[user:password@]host[:port] or smtps://")
    return url


def _at_least(minimum: float, unit: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value < minimum:
            raise ValueError(f"{value} is too small; allowed {minimum:g} {unit} or more")
        return value
    return check


def _sources_file(path: Path | None) -> Path | None:
    """The source list is read and every entry checked now, before the server listens."""
    from config.sources import SourceConfigError, read_sources

    if path is not None:
        try:
            read_sources(path)
        except SourceConfigError as exc:
            raise ValueError(str(exc)) from None
    return path


# Per field: the value as used (perhaps normalised), or ValueError saying what is wrong and what is allowed.
CHECKS: dict[str, Callable[[Any], Any]] = {
    "port": check_port, "host": _host, "data_dir": _data_dir, "public_url": _public_url,
    "smtp_url": _smtp_url,
    "log_level": _one_of(LOG_LEVELS, "log level"), "log_format": _one_of(LOG_FORMATS, "log format"),
    "sources_file": _sources_file,
    "sqlite_bulk_cache_mb": _at_least(16, "MiB"),
    "stream_retention_days": _at_least(1, "days"), "stream_keepalive_seconds": _at_least(0.1, "seconds"),
    "stream_buffer_events": _at_least(100, "events"), "stream_poll_seconds": _at_least(0.01, "seconds"),
    "webhook_backoff_seconds": _at_least(0.001, "seconds"), "webhook_max_failures": _at_least(1, "failures"),
    "webhook_interval_seconds": _at_least(0.1, "seconds"),
    "false_positive_quorum": _at_least(1, "accounts"),
}


def _checked(settings: Settings) -> Settings:
    changes = {}
    for name, check in CHECKS.items():
        try:
            changes[name] = check(getattr(settings, name))
        except ValueError as exc:
            raise SettingsError(f"setting {name!r} (CTIWIRE_{name.upper()}): {exc}") from None
    return settings.replace(**changes)


# CTIWIRE_* variables that are read on purpose but are not settings: the settings file, the classifier's
# cache (ingest/attack), the key ``ctiwire stream`` uses, and the test suite's knobs.
NOT_SETTINGS = ("CTIWIRE_CONFIG", "CTIWIRE_MODEL_DIR", "CTIWIRE_API_KEY", "CTIWIRE_TEST_MONGODB_URI",
                "CTIWIRE_FUZZ_EXAMPLES", "CTIWIRE_SCREENSHOTS")


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """One warning per ``CTIWIRE_*`` variable that is no setting, with the closest known name."""
    known = [f"CTIWIRE_{f.name.upper()}" for f in fields(Settings)] + list(NOT_SETTINGS)
    warnings = []
    for name in sorted(n for n in env if n.startswith("CTIWIRE_") and n not in known):
        # Compared without the shared prefix, which would make every name look close to every other.
        close = difflib.get_close_matches(name.removeprefix("CTIWIRE_"), [k[8:] for k in known], n=1)
        warnings.append(f"warning: unknown setting {name}" + (f" (did you mean CTIWIRE_{close[0]}?)" if close else ""))
    return warnings


def load_settings(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Load defaults, then ``CTIWIRE_CONFIG`` (YAML), then ``CTIWIRE_*`` variables, then overrides."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    config_file = env.get("CTIWIRE_CONFIG")
    layers: list[Mapping[str, Any]] = [_read_yaml(Path(config_file))] if config_file else []
    layers.append({f.name: env[f"CTIWIRE_{f.name.upper()}"] for f in fields(Settings)
                   if f"CTIWIRE_{f.name.upper()}" in env})
    known = field_types(Settings)
    for layer in layers:
        for key, raw in layer.items():
            if key not in known:
                raise SettingsError(f"unknown setting {key!r}")
            values[key] = _coerce(key, *known[key], raw)
    values.update(overrides)
    return _with_secret(_checked(Settings(**values)))


def _with_secret(settings: Settings) -> Settings:
    """Embedded mode keeps a generated HMAC secret in the data dir so cursors survive restarts.

    In production every process must share one secret (cursors and TAXII ``next`` tokens are signed
    by one process and checked by another), so ``CTIWIRE_SECRET_KEY`` is required with Redis/MongoDB.
    """
    if settings.secret_key:
        return settings
    if settings.mongodb_uri or settings.redis_url:
        raise SettingsError("setting 'secret_key': CTIWIRE_SECRET_KEY is required with MongoDB or Redis")
    path = settings.data_dir / "secret.key"  # the data dir exists: _checked made it
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    return settings.replace(secret_key=path.read_text().strip())
