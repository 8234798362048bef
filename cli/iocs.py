"""``ctiwire iocs revoke|recheck``: indicator records from the shell (operators)."""

from __future__ import annotations

import argparse
import sys

from cli.commands import CommandError, opened_store, progress_bar
from config.settings import Settings
from exporters.lookup import IndicatorError, read_exact
from ingest.recheck import recheck as recheck_records
from ingest.recheck import revoking
from store import events
from store.ioctypes import IOC_TYPES
from store.records import iso, ms, utcnow


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = sub.add_parser("iocs", help="manage IOC records").add_subparsers(dest="action", required=True)
    revoke = actions.add_parser(
        "revoke", help="revoke an indicator for everyone (exports, TAXII and the stream carry the revocation)"
    )
    revoke.add_argument("value", help="the indicator (defanged forms accepted)")
    revoke.add_argument(
        "--type", choices=IOC_TYPES, default=None, dest="ioc_type", help="its type (default: detected from the value)"
    )
    revoke.add_argument("--reason", required=True, help="why, kept with the record")
    actions.add_parser(
        "recheck",
        help="check every stored IOC against the shipped MISP warninglists again "
        "(after an upgrade of pymispwarninglists; the worker runs it at start)",
    )


async def iocs(settings: Settings, args: argparse.Namespace) -> int:
    return await (_recheck if args.action == "recheck" else _revoke)(settings, args)


async def _recheck(settings: Settings, args: argparse.Namespace) -> int:
    async with opened_store(settings) as stores:
        with progress_bar() as bar:
            task = bar.add_task("checking IOCs against the warninglists", total=None)
            report = await recheck_records(
                stores.iocs,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
                on_listed=revoking(stores),
            )
    print(
        f"{report.checked} IOC records checked against warninglists {report.version}: "
        f"{len(report.listed)} newly listed, {len(report.unlisted)} no longer listed",
        file=sys.stderr,
    )
    return 0


async def _revoke(settings: Settings, args: argparse.Namespace) -> int:
    try:
        ioc_type, value = read_exact(args.value, args.ioc_type)
    except IndicatorError as exc:
        raise CommandError(f"{args.value!r} {exc}") from exc
    if not args.reason.strip():
        raise CommandError("--reason must say why")
    at = utcnow()
    async with opened_store(settings) as stores:
        record = await events.revoke(stores, ioc_type, value, args.reason.strip(), at)
    if record is None:
        raise CommandError(f"no {ioc_type} record {value!r}")
    assert record.revoked_at is not None  # a revoked record has its time
    # A revocation stands as first made (IocStore.revoke_ioc): a second one changes nothing, and says so.
    done = "revoked" if record.revoked_at == ms(at) else "already revoked:"
    print(f"{done} {ioc_type} {value} at {iso(record.revoked_at)}: {record.revoked_reason}")
    return 0
