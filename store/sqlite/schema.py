"""DDL of the embedded database. Filterable fields are columns; the whole record is kept as JSON."""

from __future__ import annotations

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
    "PRAGMA temp_store=MEMORY",
    # A bulk write (seed, a year's re-enrichment) grows the WAL to its size; without a limit the file keeps
    # that size after each checkpoint, disk the database no longer uses (SQLite, "journal_size_limit").
    "PRAGMA journal_size_limit=67108864",
    # The writing connection's page cache (SQLite's default is 2 MB): an IOC write touches the record's row,
    # its indexes, the trigram index and the link relation at random places; 16 MB keeps their upper
    # levels cached at a year of data. A bound, whatever the file's size.
    "PRAGMA cache_size=-16384",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('data_version', 0);

CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, tier TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL, key_hash TEXT NOT NULL UNIQUE, prefix TEXT NOT NULL, scopes TEXT NOT NULL,
    created_at TEXT NOT NULL, active INTEGER NOT NULL, expires_at TEXT, last_used_at TEXT,
    UNIQUE (user_id, name)
);
CREATE TABLE IF NOT EXISTS revoked_keys (key_hash TEXT PRIMARY KEY, revoked_at TEXT NOT NULL);
-- Account web: sessions by the SHA-256 of their cookie.
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL, last_seen_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_id);
-- Throttled attempts (sign-ins, sign-ups) by subject: counted before the work (AttemptStore.reserve_attempt).
CREATE TABLE IF NOT EXISTS attempts (subject TEXT NOT NULL, at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS attempts_subject ON attempts (subject, at);
CREATE INDEX IF NOT EXISTS attempts_at ON attempts (at);
DROP TABLE IF EXISTS login_failures;
-- Single-use links mailed to a user (password reset, address check), by the SHA-256 of their secret.
CREATE TABLE IF NOT EXISTS mail_tokens (
    hash TEXT PRIMARY KEY, purpose TEXT NOT NULL, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS mail_tokens_user ON mail_tokens (user_id, purpose);

CREATE TABLE IF NOT EXISTS articles (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL, summary TEXT NOT NULL, ai_summary TEXT,
    canonical_url TEXT NOT NULL, content_hash TEXT NOT NULL,
    published_at TEXT NOT NULL, fetched_at TEXT NOT NULL, modified_at TEXT NOT NULL, created_at TEXT NOT NULL,
    source_name TEXT NOT NULL, source_type TEXT NOT NULL, source_tier INTEGER NOT NULL,
    category TEXT NOT NULL, content_type TEXT NOT NULL, severity_score REAL NOT NULL,
    rank_score REAL NOT NULL, has_iocs INTEGER NOT NULL, has_audio INTEGER NOT NULL,
    is_archived INTEGER NOT NULL, submission_type TEXT NOT NULL,
    tech_tags TEXT NOT NULL, industry_tags TEXT NOT NULL, threat_actors TEXT NOT NULL,
    technique_ids TEXT NOT NULL,
    doc BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS articles_published ON articles (published_at, id);
-- The default listing (live articles by publication): a page's end is peeked in the index alone.
CREATE INDEX IF NOT EXISTS articles_live_published ON articles (is_archived, published_at, id);
CREATE INDEX IF NOT EXISTS articles_modified ON articles (modified_at, id);
CREATE INDEX IF NOT EXISTS articles_fetched ON articles (fetched_at, id);
CREATE INDEX IF NOT EXISTS articles_created ON articles (created_at, id);
CREATE INDEX IF NOT EXISTS articles_severity ON articles (severity_score, id);
CREATE INDEX IF NOT EXISTS articles_rank ON articles (rank_score, id);
-- Equality filters users combine with the default sort: the index yields rows already in order, so a
-- filtered page reads about `limit` rows instead of sorting every match.
DROP INDEX IF EXISTS articles_source;
DROP INDEX IF EXISTS articles_category;
CREATE INDEX IF NOT EXISTS articles_source_published ON articles (source_name, published_at, id);
CREATE INDEX IF NOT EXISTS articles_category_published ON articles (category, published_at, id);
CREATE INDEX IF NOT EXISTS articles_canonical ON articles (canonical_url);
CREATE INDEX IF NOT EXISTS articles_hash ON articles (content_hash);

CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(
    title, summary, content='articles', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS articles_ai AFTER INSERT ON articles BEGIN
    INSERT INTO articles_fts (rowid, title, summary) VALUES (new.rowid, new.title, new.summary);
END;
CREATE TRIGGER IF NOT EXISTS articles_ad AFTER DELETE ON articles BEGIN
    INSERT INTO articles_fts (articles_fts, rowid, title, summary)
    VALUES ('delete', old.rowid, old.title, old.summary);
END;
CREATE TRIGGER IF NOT EXISTS articles_au AFTER UPDATE ON articles BEGIN
    INSERT INTO articles_fts (articles_fts, rowid, title, summary)
    VALUES ('delete', old.rowid, old.title, old.summary);
    INSERT INTO articles_fts (rowid, title, summary) VALUES (new.rowid, new.title, new.summary);
END;

CREATE TABLE IF NOT EXISTS iocs (
    type TEXT NOT NULL, value TEXT NOT NULL,
    first_seen TEXT NOT NULL, last_seen TEXT NOT NULL, modified TEXT NOT NULL,
    confidence TEXT NOT NULL, feed_name TEXT NOT NULL, source_category TEXT NOT NULL,
    industries TEXT NOT NULL, doc BLOB NOT NULL,
    PRIMARY KEY (type, value)
);
-- The page indexes and the type's `modified` index carry the lifecycle columns (LATE_SCHEMA), added later.
DROP INDEX IF EXISTS iocs_first_seen;
DROP INDEX IF EXISTS iocs_page;
DROP INDEX IF EXISTS iocs_modified;
DROP INDEX IF EXISTS iocs_type_first_seen;
DROP INDEX IF EXISTS iocs_type_page;
DROP INDEX IF EXISTS iocs_type_modified;
-- An IOC's articles, CVEs and techniques (kind 'article', 'cve', 'technique'), one row each with when it
-- was last reported: records carry counts and the most recent few (store.records.RECENT_LINKS). Keyed by
-- the record's rowid, which a new record takes in ascending order: its links are appended, not inserted at
-- random places (store.sqlite.ioc_links). The rowid is also what iocs_values refers to; nothing here VACUUMs.
CREATE TABLE IF NOT EXISTS ioc_refs (
    ioc INTEGER NOT NULL, kind TEXT NOT NULL, ref TEXT NOT NULL, seen TEXT NOT NULL,
    PRIMARY KEY (ioc, kind, ref)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ioc_refs_recent ON ioc_refs (ioc, kind, seen, ref);
-- Records per UTC day / hour of `modified` (store.ioc_counters), kept in the transaction of each IOC write.
CREATE TABLE IF NOT EXISTS ioc_day_counts (
    day TEXT NOT NULL, type TEXT NOT NULL, confidence TEXT NOT NULL, category TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (day, type, confidence, category)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_day_sources (
    day TEXT NOT NULL, source TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (day, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_month_counts (
    month TEXT NOT NULL, type TEXT NOT NULL, confidence TEXT NOT NULL, category TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (month, type, confidence, category)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_hour_groups (
    hour TEXT NOT NULL, type TEXT NOT NULL, confidence TEXT NOT NULL, category TEXT NOT NULL, n INTEGER NOT NULL,
    PRIMARY KEY (hour, type, confidence, category)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_hour_sources (
    hour TEXT NOT NULL, source TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (hour, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_hour_counts (hour TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_month_sources (
    month TEXT NOT NULL, source TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (month, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ioc_day_totals (day TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;

-- STIX objects around the records (store.stix_context), one row per object id with the times the store gave
-- its current version; TAXII pages them by (date_added, id), of every type or of one.
CREATE TABLE IF NOT EXISTS stix_context (
    id TEXT PRIMARY KEY, type TEXT NOT NULL, created TEXT NOT NULL, modified TEXT NOT NULL,
    date_added TEXT NOT NULL, facts BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS stix_context_added ON stix_context (date_added, id);
CREATE INDEX IF NOT EXISTS stix_context_type_added ON stix_context (type, date_added, id);
-- Named text settings of the stored data (the warninglists version the IOC records were checked against).
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS sources (name TEXT PRIMARY KEY, doc BLOB NOT NULL);
-- Saved feeds (store.ports.feeds): one account's named IOC filters, the record as JSON.
CREATE TABLE IF NOT EXISTS feeds (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL, created_at TEXT NOT NULL, doc BLOB NOT NULL, UNIQUE (user_id, name)
);
CREATE INDEX IF NOT EXISTS feeds_user ON feeds (user_id, created_at, id);
-- Allowlists (store.ports.allowlist): values, networks and domains an account keeps out of its exports.
CREATE TABLE IF NOT EXISTS allowlist (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, created_at TEXT NOT NULL, note TEXT NOT NULL,
    UNIQUE (user_id, kind, value)
);
CREATE INDEX IF NOT EXISTS allowlist_user ON allowlist (user_id, created_at, id);
-- Webhooks (store.ports.webhooks): the record as JSON, what the due query and the claim read as columns.
CREATE TABLE IF NOT EXISTS webhooks (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL, paused INTEGER NOT NULL, next_attempt TEXT NOT NULL, claimed_until TEXT,
    doc BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_user ON webhooks (user_id, created_at, id);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE, at TEXT NOT NULL, id TEXT NOT NULL,
    doc BLOB NOT NULL, PRIMARY KEY (webhook_id, at, id)
) WITHOUT ROWID;
-- Sightings (store.ports.sightings): every report kept; distinct accounts per value and kind are counted.
CREATE TABLE IF NOT EXISTS sightings (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, type TEXT NOT NULL, value TEXT NOT NULL, kind TEXT NOT NULL,
    created_at TEXT NOT NULL, doc BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS sightings_value ON sightings (type, value, kind, user_id);
CREATE INDEX IF NOT EXISTS sightings_user ON sightings (user_id, kind, type, value);
-- Usage history (store.usage): requests and 429s per key (or web budget) and UTC day.
CREATE TABLE IF NOT EXISTS key_usage (
    key_id TEXT NOT NULL, day TEXT NOT NULL, requests INTEGER NOT NULL, refused INTEGER NOT NULL,
    PRIMARY KEY (key_id, day)
) WITHOUT ROWID;
"""

# Columns added after databases existed: (table, column, type). ``open`` adds each one missing with
# ALTER TABLE (appended, nullable), so every database has them whatever release made it.
ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("articles", "list_json", "BLOB"),  # the pre-encoded list form; NULL rows fall back to ``doc``
    ("iocs", "stix_id", "TEXT"),  # the record's STIX object id (store.stixids), backfilled at open
    ("users", "password_hash", "TEXT"),  # argon2id, for the account web
    ("iocs", "api_json", "BLOB"),  # the pre-encoded API form; NULL rows fall back to ``doc``
    ("articles", "csv_line", "BLOB"),  # the pre-encoded CSV row; NULL rows fall back to ``doc``
    ("api_keys", "pending", "INTEGER"),  # 1 until the secret was handed out; NULL (older rows) = delivered
    ("api_keys", "previous_hash", "TEXT"),  # a rotated key's former secret, valid during its grace
    ("api_keys", "previous_expires_at", "TEXT"),
    ("users", "unverified", "INTEGER"),  # 1 until the sign-up's e-mail link is followed; NULL = verified
    # An IOC's lifecycle (store.decay): filled by the list-form rebuild for older rows (store/sqlite/listforms.py)
    ("iocs", "valid_until", "TEXT"),
    ("iocs", "revoked", "INTEGER"),
    ("iocs", "warninglisted", "INTEGER"),  # 1 when the value is on a warninglist; NULL (older rows) = not
    # The record's place on the score ladder (store.decay.ladder_place), whole milliseconds. Databases of list-form
    # version 8 also keep ``decay_place``, the same place in days as a REAL, unused since (dropping a column
    # rewrites the whole table).
    ("iocs", "score_place", "INTEGER"),
)
# Run once the added columns exist. Not unique: two spellings of one CVE share a vulnerability id.
LATE_SCHEMA = """
-- The page order, then `modified` and the lifecycle columns (status: revoked, valid_until; warninglisted):
-- a page walking the order checks the lookback bound and the default `status=active` in the index and reads
-- only the rows it returns (SQLite seeks the table row only when a column outside the index is needed), so
-- the records before the window, expired or listed, that a long window's walk passes cost an index entry each.
CREATE INDEX IF NOT EXISTS iocs_page_status ON iocs (
    first_seen, type, value, modified, revoked, valid_until, warninglisted
);
-- A type filter with the page order (first_seen, then value within one type) and the same columns: a page of
-- one type walks its index instead of sorting every record of the type.
CREATE INDEX IF NOT EXISTS iocs_type_page_status ON iocs (
    type, first_seen, value, modified, revoked, valid_until, warninglisted
);
-- Records by `modified`, then the TAXII order's type and value, and the same lifecycle columns: a page in
-- date_added order walks it (and its valid_until twin below) from the position, as do the windows by
-- modified (store.sqlite.queries.added_select); short windows and list totals by status count index entries
-- alone. The (type, ...) twin serves a filter on one type.
CREATE INDEX IF NOT EXISTS iocs_modified_status ON iocs (modified, type, value, revoked, valid_until, warninglisted);
CREATE INDEX IF NOT EXISTS iocs_type_modified_status ON iocs (
    type, modified, value, revoked, valid_until, warninglisted
);
CREATE INDEX IF NOT EXISTS iocs_stix_id ON iocs (stix_id);
CREATE INDEX IF NOT EXISTS api_keys_previous_hash ON api_keys (previous_hash);
-- Polls for changes find the records that expired in their window by it (store.decay); TAXII pages walk
-- it for the records whose date_added is their expiry, of every type or of one (store.sqlite.queries.added_select).
DROP INDEX IF EXISTS iocs_valid_until;
CREATE INDEX IF NOT EXISTS iocs_valid_until_page ON iocs (valid_until, type, value);
CREATE INDEX IF NOT EXISTS iocs_type_valid_until_page ON iocs (type, valid_until, value);
-- The few warninglisted records by modified: how many a window's default lists leave out (IocStore.ioc_stats).
CREATE INDEX IF NOT EXISTS iocs_warninglisted ON iocs (modified) WHERE warninglisted = 1;
"""
# The function the backfill calls; registered on the writing connection only.
STIX_ID_FUNCTION = "ctiwire_stix_id"
BACKFILL_STIX_IDS = f"UPDATE iocs SET stix_id = {STIX_ID_FUNCTION}(type, value) WHERE stix_id IS NULL"
