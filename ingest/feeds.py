"""Feed and page parsing: RSS, Atom and RDF through feedparser; article pages through trafilatura.

Pure functions over bytes already fetched (ingest.fetch), so they are tested without a network.
"""

from __future__ import annotations

import calendar
import hashlib
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import feedparser
import trafilatura
from lxml import html as lxml_html

from store.records import ms

# Tracking parameters that make one story look like many (canonical URL de-duplication).
_TRACKING = re.compile(r"^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid|ref|source|cmpid|_hsenc|_hsmi)$", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
_CHARACTER_REFERENCE = re.compile(rb"&#(?:[xX]([0-9a-fA-F]+)|([0-9]+));")
_REPLACEMENT_REFERENCE = b"&#xFFFD;"


class FeedError(ValueError):
    """The document is not a usable feed."""


@dataclass(frozen=True, slots=True)
class FeedItem:
    """One entry of a feed."""

    title: str
    link: str
    summary: str
    published: datetime | None
    image_url: str | None = None


def canonical_url(url: str) -> str:
    """Lowercase scheme and host, no fragment, no tracking parameters, no trailing slash on the path."""
    parts = urlsplit(url.strip())
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _TRACKING.match(k)])
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, query, ""))


def content_hash(title: str, text: str) -> str:
    """Hash of the normalised title and text: the same story under two URLs is one article."""
    normal = _SPACE.sub(" ", f"{title}\n{text}").strip().lower()
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def html_to_text(markup: str) -> str:
    """Plain text of an HTML fragment (feed summaries often carry markup)."""
    if "<" not in markup:
        return _SPACE.sub(" ", markup).strip()
    try:
        return _SPACE.sub(" ", lxml_html.fromstring(markup).text_content()).strip()
    except (ValueError, lxml_html.etree.ParserError):
        return _SPACE.sub(" ", re.sub(r"<[^>]+>", " ", markup)).strip()


def _when(entry: Any) -> datetime | None:
    parsed = entry.get("published_parsed") or entry.get("updated_parsed")
    if not parsed:
        return None
    return ms(datetime.fromtimestamp(calendar.timegm(parsed), UTC))


def _image(entry: Any) -> str | None:
    for media in entry.get("media_content", []) + entry.get("media_thumbnail", []):
        if media.get("url"):
            return str(media["url"])
    return None


def _named_character(reference: re.Match[bytes]) -> bytes:
    """A numeric character reference, or U+FFFD's when it names no character: NUL, a surrogate or a number
    past U+10FFFF (WHATWG HTML, "numeric character reference end state"). feedparser's lenient parser
    raises on those, which lost the whole feed for one item's summary."""
    hexadecimal, decimal = reference.groups()
    number = int(hexadecimal, 16) if hexadecimal else int(decimal)
    if number == 0 or 0xD800 <= number <= 0xDFFF or number > 0x10FFFF:
        return _REPLACEMENT_REFERENCE
    return reference.group()


def parse_feed(body: bytes, url: str) -> list[FeedItem]:
    """Entries with a title and a link; FeedError when nothing usable could be read."""
    body = _CHARACTER_REFERENCE.sub(_named_character, body)
    try:
        parsed = feedparser.parse(body, response_headers={"content-location": url})
    except Exception as exc:  # a parser defect on one document: that source's error, not the run's
        raise FeedError(f"{url}: unreadable feed ({type(exc).__name__}: {str(exc)[:200]})") from exc
    items = [FeedItem(html_to_text(e.get("title", "")), e["link"].strip(),
                      html_to_text(e.get("summary", "") or e.get("description", "")), _when(e), _image(e))
             for e in parsed.entries if e.get("link") and e.get("title")]
    if not items and (parsed.get("bozo") or not parsed.get("version")):
        reason = parsed.get("bozo_exception") or "not an RSS, Atom or RDF document"
        raise FeedError(f"{url}: unreadable feed ({reason})")
    return items


@dataclass(frozen=True, slots=True)
class Page:
    """The main text of an article page and what metadata it declares."""

    text: str
    title: str | None
    image_url: str | None


def extract_page(body: bytes, content_type: str, url: str) -> Page | None:
    """Main text via trafilatura (any declared or sniffed encoding); None when there is none."""
    markup = _decode(body, content_type)
    extracted = trafilatura.bare_extraction(markup, url=url, with_metadata=True, include_comments=False)
    if extracted is None:
        return None
    document: dict[str, Any] = extracted if isinstance(extracted, dict) else extracted.as_dict()
    text = str(document.get("text") or "").strip()
    return Page(text, document.get("title"), document.get("image")) if text else None


def _decode(body: bytes, content_type: str) -> str:
    match = re.search(r"charset=([\w-]+)", content_type, re.IGNORECASE)
    declared = match.group(1) if match else None
    meta = re.search(rb"<meta[^>]+charset=[\"']?([\w-]+)", body[:4096], re.IGNORECASE)
    for encoding in (declared, meta.group(1).decode("ascii", "ignore") if meta else None, "utf-8"):
        if not encoding:
            continue
        try:
            return body.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("cp1252", errors="replace")  # the web's most common mislabel of Latin-1 text
