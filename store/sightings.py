"""The accounts' report counts on IOC records (POST /api/v1/sightings, re-enrichment).

The counts are written through ``IocStore.upsert_iocs``: a record with new counts merges into the stored one
(``codec.merge_ioc`` keeps the larger counts, moves ``modified`` forward and leaves lists, links and a
revocation as they are). Counts of distinct accounts only grow (every report is kept), so concurrent writers
end with the largest, whatever their order, and the IOC seam needs no operation of its own for them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

from store.codec import with_sighting_counts
from store.ports import IocStore
from store.ports.sightings import IocKey, Tally
from store.records import Ioc


async def count_onto_records(iocs: IocStore, tallies: Mapping[IocKey, Tally], at: datetime) -> list[tuple[Ioc, Ioc]]:
    """Give the stored records among ``tallies`` their counts as of ``at`` (``modified`` moves to it, and the
    data version with the write): (before, after) of each record whose counts changed; values with no record
    are skipped, and nothing is written when no count changed."""
    by_type: dict[str, list[str]] = defaultdict(list)
    for ioc_type, value in tallies:
        by_type[ioc_type].append(value)
    changes = []
    for ioc_type, values in by_type.items():
        for value, held in (await iocs.get_iocs(ioc_type, values)).items():
            counts = tallies[ioc_type, value]
            if (held.sightings, held.false_positives) != counts:
                changes.append((held, with_sighting_counts(held, *counts, at)))
    if changes:
        await iocs.upsert_iocs([record for _, record in changes])
    return changes
