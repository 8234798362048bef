"""Logging for every process of the service: one format, and no API key in any line.

Keys never reach a log from this code (the access log omits query strings), but a library may quote what
a client sent: Tornado's "Malformed HTTP message ... Invalid header value" line repeats a header with a
NUL or a bare CR, key included. A filter on every handler of the root logger (all loggers propagate
there) rewrites any ``sk_live_...`` value, and any HTTP Basic credentials (the key base64-encoded, as
TAXII and export clients send it: no ``sk_live_`` to see), before a line is written, whichever logger
produced it.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import orjson

# The key prefix, then everything up to a space or a quote, including the escaped or raw NUL and CR
# that made the header malformed (the rest of the secret sits after them).
_SECRET_TEXT = r"(?:\\x00|\\r|\\n|\r(?!\n)|\x00|[^\s'\",;])"
KEY_PATTERN = re.compile(f"sk_live_{_SECRET_TEXT}*")
REDACTED = "sk_live_[REDACTED]"
# ``Basic`` and the credentials after it (RFC 7617), in any letter case; 16 characters at least, as a key
# alone is longer (store.apikeys.looks_like_key), so the word "basic" in prose stays.
BASIC_PATTERN = re.compile(f"(?i)(\\bbasic[ \t]+){_SECRET_TEXT}{{16,}}")
BASIC_REDACTED = r"\1[REDACTED]"


def redact(text: str) -> str:
    """``text`` without API keys or Basic credentials."""
    return BASIC_PATTERN.sub(BASIC_REDACTED, KEY_PATTERN.sub(REDACTED, text))


def _secret_in(text: str | None) -> bool:
    return text is not None and ("sk_live_" in text or BASIC_PATTERN.search(text) is not None)


class RedactKeys(logging.Filter):
    """Replaces every API key and Basic credential in a record's message (arguments and exception text
    included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if _secret_in(message) or _secret_in(record.exc_text):
            record.msg, record.args = redact(message), None
            if record.exc_text:
                record.exc_text = redact(record.exc_text)
        return True


# What the access log attaches to its records (``extra=``): the JSON format writes each as a field.
REQUEST_FIELDS = ("request_id", "method", "path", "status", "duration_ms", "key", "user_id", "client")
FORMATS = ("text", "json")


class JsonLines(logging.Formatter):
    """One JSON object a line: time, level, logger, message, and the request's fields when it has them."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
                                 "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        entry.update({name: getattr(record, name) for name in REQUEST_FIELDS if hasattr(record, name)})
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return orjson.dumps(entry).decode()


def configure(level: str, fmt: str = "text") -> None:
    """The service's logging to stderr, ``text`` lines or ``json`` objects, every handler redacting keys."""
    if fmt not in FORMATS:
        raise ValueError(f"log format {fmt!r}: choose text or json")
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        if fmt == "json":
            formatter = JsonLines()
            formatter.converter = time.gmtime
            handler.setFormatter(formatter)
        if not any(isinstance(f, RedactKeys) for f in handler.filters):
            handler.addFilter(RedactKeys())
