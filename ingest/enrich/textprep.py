"""From an article to lines the extractors can read: Unicode clean-up, refanging, headings and sections.

An article is read line by line. Each line keeps its text as written (``raw``) and refanged (``text``),
so an extractor can tell that ``evil[.]com`` was written defanged, and knows the section it sits in:
values listed under an "Indicators of compromise" heading are presented as indicators, links under
"References" are sources.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from lxml import etree
from lxml import html as lxml_html

from ingest.enrich.listshapes import BULLET, COLUMN_GAP, LOOKS_TECHNICAL, classify_heading, list_item, opens_list
from store.indicators import refang

# Characters that hide inside copied indicators: zero-width spaces and joiners, soft hyphens, BOMs.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
_SPACES = re.compile(r"[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_MARKDOWN_HEADING = re.compile(r"^\s*#{1,6}\s+(.*)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])")
_HEADING_WORDS = re.compile(r"[A-Za-z][A-Za-z&/'-]*")
_BLOCK_TAGS = ("p", "div", "li", "tr", "pre", "blockquote", "section", "article", "table", "ul", "ol",
               "br", "dd", "dt", "figcaption", "td", "th", "caption", "figure", "main", "dl", "hr")
# Characters XML 1.0 forbids (section 2.2, "Char"), which lxml refuses in a tree; an XML declaration,
# which it refuses in a str (the text is already decoded).
_NOT_XML_CHAR = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_XML_DECLARATION = re.compile(r"<\?xml[^>]*>")
_SOURCE_BREAK = re.compile(r"\s*[\r\n]+\s*")
_DROP_TAGS = ("script", "style", "noscript", "nav", "footer", "header", "aside", "form", "svg", "template")


@dataclass(frozen=True, slots=True)
class Line:
    """One line of an article: as written, refanged, and where it sits."""

    index: int
    raw: str
    text: str
    section: str  # "body", "ioc" (under an indicators heading) or "reference"
    heading: str  # the text of the heading the line sits under ("" before the first one)
    is_heading: bool = False
    is_title: bool = False
    spans: tuple[tuple[int, int], ...] = ()

    def sentences(self) -> list[tuple[int, int]]:
        """(start, end) offsets of the sentences of the refanged text (computed once, when built)."""
        return list(self.spans) if self.spans else sentence_spans(self.text)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the sentences of ``text`` (a full stop, then a capital or a digit)."""
    spans, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


@dataclass(slots=True)
class Document:
    """An article as lines, plus the plain text for the classifiers."""

    title: str
    lines: list[Line] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)

    @property
    def body_lines(self) -> list[Line]:
        return [line for line in self.lines if not line.is_title]


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")
_MIN_LINE_WORDS, _MIN_SENTENCE_WORDS = 6, 4
# A query or code line (a hunting query quoted in the article) is not prose: comparisons, pipes, field: "value".
# A field name is short: unbounded, the dotted run was read again from every word of a long dotted line.
_CODE_LINE = re.compile(r"==|!=|(?:^|\s)\|\s|\b[a-z_]{1,64}\.[a-z_.]{1,128}:\s*[\"']|[{};]\s*$")


def prose_sentences(document: Document) -> list[str]:
    """Prose sentences of the body as written: no headings, no indicator lists, no reference sections."""
    found = []
    for line in document.body_lines:
        if (line.is_heading or line.section != "body" or len(_WORD.findall(line.text)) < _MIN_LINE_WORDS
                or _CODE_LINE.search(line.text)):
            continue
        for start, end in sentence_spans(line.raw):  # as written: defanged values stay defanged
            sentence = line.raw[start:end].strip()
            if len(_WORD.findall(sentence)) >= _MIN_SENTENCE_WORDS:
                found.append(sentence)
    return found


def clean(text: str) -> str:
    """NFKC-normalised text without invisible characters, with plain spaces. A tab becomes two spaces: the
    column gap of a tab-separated table (``listshapes``) stays one."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE)
    return _SPACES.sub(" ", text.replace("\t", "  "))


def heading_text(line: str) -> str | None:
    """The heading a line is, or None for a body line.

    A heading is a markdown heading, or a short line without sentence punctuation or indicators that
    ends with a colon, is in title case or in capitals.
    """
    match = _MARKDOWN_HEADING.match(line)
    if match:
        return match.group(1).strip().rstrip(":")
    stripped = line.strip()
    words = _HEADING_WORDS.findall(stripped)
    if not words or len(words) > 9 or len(stripped) > 80 or BULLET.match(stripped) or " | " in stripped:
        return None
    if stripped[-1] in ".,;!?\"'" or LOOKS_TECHNICAL.search(stripped) or COLUMN_GAP.search(stripped):
        return None
    titled = sum(word[0].isupper() for word in words) >= max(1, (len(words) + 1) // 2)
    short_sentence_case = len(words) <= 6 and stripped[0].isupper()
    if stripped.endswith(":") or stripped.isupper() or titled or short_sentence_case:
        return stripped.rstrip(":").strip()
    return None


def build_document(title: str, text: str) -> Document:
    """Lines of the title and body, refanged, each tagged with its heading and section."""
    document = Document(title=clean(title).strip())
    if document.title:
        refanged = refang(document.title)
        document.lines.append(Line(0, document.title, refanged, "body", "", is_title=True,
                                   spans=tuple(sentence_spans(refanged))))
    section, heading, outer = "body", "", ""
    raws = [raw for raw in clean(text).splitlines() if raw.strip()]
    for position, raw in enumerate(raws):
        found = heading_text(raw)
        if outer and found is None and not list_item(raw):
            section, outer = outer, ""  # the introduced list ended with the first line that is prose again
        if found is not None:
            section, heading, outer = classify_heading(found), found, ""
        refanged = refang(raw)
        opened = _opened(section, refanged, raws[position + 1] if position + 1 < len(raws) else "")
        if opened is not None:
            # "The operators used the following C2 servers:", a table header "type,value,comment": the lines
            # it introduces are an indicator list ("... is a false positive:": a list of clean values).
            outer, section, heading = (outer or section if found is None else ""), opened, raw.strip().rstrip(":")
            if found is None:
                document.lines.append(Line(len(document.lines), raw, refanged, outer, heading,
                                           spans=tuple(sentence_spans(refanged))))
                continue
        document.lines.append(Line(len(document.lines), raw, refanged, section, heading, is_heading=found is not None,
                                   spans=tuple(sentence_spans(refanged))))
    return document


def _opened(section: str, line: str, following: str) -> str | None:
    """The list section ``line`` opens from ``section``: an indicator list from the body, a list of clean
    values from the body or an indicator section."""
    if section not in ("body", "ioc"):
        return None
    opened = opens_list(line, refang(following))
    return opened if opened == "benign" or (opened == "ioc" and section == "body") else None


def _unwrap(root: lxml_html.HtmlElement) -> None:
    """Line breaks of the HTML source are spaces, as a browser renders them (a paragraph hard-wrapped
    in the source is one line of text), except inside ``<pre>``, where they are the content's own."""
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue  # comments and processing instructions
        inside = any(ancestor.tag == "pre" for ancestor in element.iterancestors())
        if element.text and element.tag != "pre" and not inside:
            element.text = _SOURCE_BREAK.sub(" ", element.text)
        if element.tail and not inside:
            element.tail = _SOURCE_BREAK.sub(" ", element.tail)


def html_to_text(markup: str) -> tuple[str, str]:
    """(title, text) of an HTML page: block elements become lines, headings become markdown headings.

    lxml only: deterministic and offline; scripts, styles and page chrome (nav, header, footer, aside)
    are dropped, tables become ``cell | cell`` lines so that indicator tables stay one row per line.
    """
    markup = _XML_DECLARATION.sub("", _NOT_XML_CHAR.sub("", markup))  # every one: the next became the first
    try:
        root = lxml_html.fromstring(markup)
    except etree.ParserError:  # no element at all (blank, or only comments and declarations)
        return "", ""
    if not isinstance(root.tag, str):  # a lone comment or processing instruction ("\x85<?php ?>"): no text
        return "", ""
    for element in list(root.iter(*_DROP_TAGS)):
        element.drop_tree()
    _unwrap(root)
    title = (root.findtext(".//title") or "").strip()
    headings = root.xpath("//h1|//h2|//h3|//h4|//h5|//h6")
    if not title and headings:
        title = headings[0].text_content().strip()
    for element in headings:
        element.text = f"\n# {element.text or ''}"
        element.tail = "\n" + (element.tail or "")
    for element in root.iter(*_BLOCK_TAGS):
        separator = " | " if element.tag in ("td", "th") else "\n"
        element.tail = separator + (element.tail or "")
    body = root.find("body")
    text = (body if body is not None else root).text_content()
    lines = (" ".join(line.split()) for line in text.splitlines())
    return title, "\n".join(line.strip(" |") for line in lines if line.strip(" |"))
