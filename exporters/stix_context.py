"""Stored context facts (store.stix_context) -> the STIX 2.1 objects TAXII serves.

The same builders as the STIX export (exporters.stix_objects, exporters.stix_graph), so an object has
one id and one shape whichever way a client gets it; ``created`` and ``modified`` are the store's (a
report's ``published`` stays the article's publication date).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from exporters.base import ArticleRef
from exporters.stix_graph import actor_object
from exporters.stix_objects import malware_object, relationship_object, report_object, sponsor_object
from store.records import iso, parse_iso
from store.stix_context import ContextObject

Build = Callable[[dict[str, Any], str, str], dict[str, Any]]


def _report(facts: dict[str, Any], created: str, modified: str) -> dict[str, Any]:
    published = parse_iso(facts["published"]) if facts["published"] else None
    ref = ArticleRef(facts["title"], facts["url"], facts["source"], published)
    obj = report_object(facts["article"], ref, list(facts["refs"]), created)
    obj.update(created=created, modified=modified)
    return obj


_BUILDERS: dict[str, Build] = {
    "report": _report,
    "intrusion-set": lambda facts, created, modified: actor_object(facts["name"], created, modified),
    "malware": lambda facts, created, modified: malware_object(facts["name"], created, modified),
    "threat-actor": lambda facts, created, modified: sponsor_object(facts["name"], created, modified),
    "relationship": lambda facts, created, modified: relationship_object(
        facts["source"], facts["kind"], facts["target"], created, modified
    ),
}


def context_object(held: ContextObject) -> dict[str, Any]:
    """The STIX object of one stored fact."""
    return _BUILDERS[held.type](held.facts, iso(held.created), iso(held.modified))
