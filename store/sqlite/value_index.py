"""The trigram index of IOC values (``iocs_values``, an external-content FTS5 table over ``iocs.value``) that
serves substring searches (``store.value_search``).

Created at open when this SQLite has the ``trigram`` tokenizer (3.34 and later), filled from the records
once, then kept by triggers: a record's value never changes (it is half the key, and writes update rows in
place), so inserts and deletes are all it follows. Without the tokenizer the store says so in its log and
substring searches scan the values (``instr``), as before the index.

A search looks up only the :data:`RARE_TRIGRAMS` rarest trigrams of its needle (``Rarity``), then checks each
match against the value: the common trigrams of a domain (``.co``, ``com``) have posting lists that grow
with the data, the rarest few do not.
"""

from __future__ import annotations

import logging
import sqlite3

from store.sqlite.queries import fts_phrase
from store.value_search import trigrams

log = logging.getLogger(__name__)

# Three: the values holding all three of a domain's rarest trigrams are a few, where those holding two
# were tens at 70,000 records and grew with them (BENCHMARKS.md, ``scripts/bench scale``).
RARE_TRIGRAMS = 3
RARITY_KEPT = 20_000  # trigrams whose counts are remembered (a few MB at most); forgotten all at once past it
# A trigram's values are counted up to here: the rarest few of a needle are told apart, a common one's
# posting list (which grows with the data) is read no further. Values are built from a few words and digits,
# so each trigram of a needle is common: below a few thousand, the counts of a year of data tie at the cap
# and the tie (broken alphabetically) picks trigrams as common as any. Counting to the cap costs about a
# quarter of a millisecond, once per trigram.
COUNT_CAP = 4096
_DOCS = "SELECT count(*) FROM (SELECT 1 FROM iocs_values WHERE iocs_values MATCH ? LIMIT ?)"

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


class Rarity:
    """How many values hold each trigram (up to ``COUNT_CAP``), read from the index once and then remembered.
    The counts only
    choose which trigrams of a needle to look up (every trigram of a match is in the needle's value, and
    each match is checked against the value), so a count gone stale costs speed, never a result."""

    def __init__(self) -> None:
        self._docs: dict[str, int] = {}

    def match(self, db: sqlite3.Connection, needle: str) -> str:
        """The FTS5 query of ``needle``'s rarest trigrams, each quoted (user input is never FTS5 syntax)."""
        grams = trigrams(needle)
        if len(self._docs) + len(grams) > RARITY_KEPT:
            self._docs = {}
        docs = self._docs  # this call's (another thread may start a new one)
        for g in grams:
            if g not in docs:
                docs[g] = int(db.execute(_DOCS, (fts_phrase((g,), "AND"), COUNT_CAP)).fetchone()[0])
        rarest = sorted(grams, key=lambda g: (docs[g], g))[:RARE_TRIGRAMS]
        return fts_phrase(tuple(rarest), "AND")
