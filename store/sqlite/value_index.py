"""The trigram index of IOC values (``iocs_values``, an external-content FTS5 table over ``iocs.value``) that
serves substring searches (``store.value_search``).

Created at open when this SQLite has the ``trigram`` tokenizer (3.34 and later), filled from the records
once, then kept by triggers: a record's value never changes (it is half the key, and writes update rows in
place), so inserts and deletes are all it follows. Without the tokenizer the store says so in its log and
substring searches scan the values (``instr``), as before the index.
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger(__name__)

_DDL = """
BEGIN;
CREATE VIRTUAL TABLE iocs_values USING fts5(
    value, content='iocs', content_rowid='rowid', tokenize='trigram case_sensitive 1'
);
CREATE TRIGGER iocs_values_ai AFTER INSERT ON iocs BEGIN
    INSERT INTO iocs_values (rowid, value) VALUES (new.rowid, new.value);
END;
CREATE TRIGGER iocs_values_ad AFTER DELETE ON iocs BEGIN
    INSERT INTO iocs_values (iocs_values, rowid, value) VALUES ('delete', old.rowid, old.value);
END;
INSERT INTO iocs_values (iocs_values) VALUES ('rebuild');
COMMIT;
"""


def ensure(db: sqlite3.Connection) -> bool:
    """Create and fill the index unless it exists; whether substring searches can use it."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'iocs_values'").fetchone():
        return True
    try:
        db.executescript(_DDL)
    except sqlite3.OperationalError as exc:
        if db.in_transaction:
            db.execute("ROLLBACK")
        log.warning(
            "SQLite %s has no trigram tokenizer (%s): IOC substring searches scan every value",
            sqlite3.sqlite_version,
            exc,
        )
        return False
    return True
