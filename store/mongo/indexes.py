"""Indexes created at start-up (``MongoStore.open``); ``create_index`` is idempotent for an equal spec.

Every article sort has an index on (sort key, ``_id``): the keyset pages walk it in either direction
without a sort in memory. The one text index covers title and summary (spec, ``q_field=default``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """One index of one collection: its keys and ``create_index`` options."""

    collection: str
    keys: list[tuple[str, Any]]
    options: dict[str, Any] = field(default_factory=dict)


def _unique(collection: str, *keys: str) -> IndexSpec:
    return IndexSpec(collection, [(k, 1) for k in keys], {"unique": True})


def _plain(collection: str, *keys: str) -> IndexSpec:
    return IndexSpec(collection, [(k, 1) for k in keys])


TEXT_INDEX = IndexSpec(
    "articles", [("title", "text"), ("summary", "text")],
    {"name": "articles_text", "default_language": "english", "weights": {"title": 3, "summary": 1}},
)

INDEXES: tuple[IndexSpec, ...] = (
    _unique("users", "email"),
    _unique("api_keys", "key_hash"),
    _plain("api_keys", "previous_hash"),  # a rotated key's former secret, during its grace
    _unique("api_keys", "user_id", "name"),  # Conflict on a duplicate key name (KeyStore.create_key)
    _plain("api_keys", "user_id", "created_at"),
    _plain("sessions", "user_id"),
    _plain("key_usage", "key_id", "day"),  # AccountStore.usage_history
    IndexSpec("attempts", [("seen", 1)], {"expireAfterSeconds": 86_400}),  # a subject idle for a day goes
    IndexSpec("mail_tokens", [("expires_at", 1)], {"expireAfterSeconds": 0}),  # a mailed link gone stale
    _plain("mail_tokens", "user_id", "purpose"),
    _unique("feeds", "user_id", "name"),  # Conflict on a duplicate feed name (FeedStore.create_feed)
    _plain("feeds", "user_id", "created_at", "_id"),
    _unique("allowlist", "user_id", "kind", "value"),  # one entry per value (AllowlistStore.add_allow_entries)
    _plain("allowlist", "user_id", "created_at", "_id"),
    _plain("webhooks", "user_id", "created_at", "_id"),
    _plain("webhooks", "paused", "next_attempt"),  # WebhookStore.due_webhooks
    _plain("webhook_deliveries", "webhook_id", "at", "_id"),
    _plain("sightings", "type", "value", "kind", "user_id"),  # SightingStore tallies and the audit list
    _plain("sightings", "user_id", "kind", "type", "value"),  # SightingStore.false_positives_of
    *(_plain("articles", name, "_id") for name in (
        "published_at", "modified_at", "fetched_at", "created_at", "severity_score", "rank_score")),
    # Equality filters combined with the default sort: pages come off the index in order (as on SQLite).
    _plain("articles", "source_name", "published_at", "_id"),
    _plain("articles", "category", "published_at", "_id"),
    _plain("articles", "canonical_url"),
    _plain("articles", "content_hash"),
    _plain("articles", "mitre_techniques.id"),
    TEXT_INDEX,
    _plain("iocs", "first_seen", "type", "value"),
    # By modified and valid_until, then the TAXII order's type and value, of every type or of one: the two arms
    # of a page in date_added order walk them from the position (store.mongo.queries.added_arms), and the windows
    # by modified and the polls' expiries seek them (as on SQLite).
    _plain("iocs", "modified", "type", "value"),
    _plain("iocs", "valid_until", "type", "value"),
    # One type with the page order, and with the lookback bound on modified (as on SQLite).
    _plain("iocs", "type", "first_seen", "value"),
    _plain("iocs", "type", "modified", "value"),
    _plain("iocs", "type", "valid_until", "value"),
    _plain("iocs", "grams"),  # multikey: each value's trigrams, for substring searches (store.value_search)
    _plain("iocs", "value"),
    _plain("iocs", "stix_id"),  # TAXII match[id] and object lookups; a few records per id, then sorted
    # The few warninglisted records by modified: how many a window's default lists leave out (ioc_stats).
    IndexSpec("iocs", [("modified", 1)], {"name": "iocs_warninglisted",
                                          "partialFilterExpression": {"warninglisted": True}}),
    # A record's most recent links of one kind (IocStore.ioc_links), newest first off the index.
    IndexSpec("ioc_links", [("ioc", 1), ("kind", 1), ("seen", -1), ("ref", -1)]),
    _plain("ioc_counters", "k", "b"),  # a window's whole days of one kind of counter (store.ioc_counters)
    # STIX context objects in TAXII order, of every type or of one (store.stix_context).
    _plain("stix_context", "date_added", "_id"),
    _plain("stix_context", "type", "date_added", "_id"),
)


# Indexes earlier releases created and the ones above replace (each is a prefix of its successor, which serves
# every read it served): ``MongoStore.open`` drops them, so a database carried over does not keep paying their
# writes. (collection, index name).
RETIRED_INDEXES: tuple[tuple[str, str], ...] = (
    ("iocs", "modified_1"),
    ("iocs", "type_1_modified_1"),
    ("iocs", "valid_until_1"),
)
