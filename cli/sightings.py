"""``ctiwire sightings list VALUE``: every report of a value, for the audit of its counts and revocation."""

from __future__ import annotations

import argparse

from cli.commands import CommandError, opened_store
from config.settings import Settings
from exporters.lookup import IndicatorError, read_exact
from store.base import NotFound
from store.ioctypes import IOC_TYPES
from store.ports import Stores
from store.records import iso


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = sub.add_parser("sightings", help="audit sighting and false-positive reports").add_subparsers(
        dest="action", required=True
    )
    listing = actions.add_parser("list", help="every report of a value, oldest first, with its account")
    listing.add_argument("value", help="the indicator (defanged forms accepted)")
    listing.add_argument("--type", choices=IOC_TYPES, default=None, help="the value's type (default: detected)")


async def sightings(settings: Settings, args: argparse.Namespace) -> int:
    try:
        ioc_type, value = read_exact(args.value, args.type)
    except IndicatorError as exc:
        raise CommandError(f"{args.value!r} {exc}") from exc
    async with opened_store(settings) as stores:
        await _list(stores, ioc_type, value)
    return 0


async def _account(stores: Stores, user_id: str, known: dict[str, str]) -> str:
    """The account's e-mail (its id once the account is deleted), read once per account."""
    if user_id not in known:
        try:
            known[user_id] = (await stores.accounts.get_user(user_id=user_id)).email
        except NotFound:
            known[user_id] = f"{user_id} (deleted)"
    return known[user_id]


async def _list(stores: Stores, ioc_type: str, value: str) -> None:
    reports = await stores.sightings.list_sightings(ioc_type, value)
    tally = (await stores.sightings.tallies([(ioc_type, value)])).get((ioc_type, value))
    seen, false = (tally.seen, tally.false_positives) if tally else (0, 0)
    print(f"{ioc_type} {value}: {len(reports)} reports; distinct accounts: {seen} seen, {false} false positive")
    print("reported\tobserved\taccount\tkind\tnote")
    accounts: dict[str, str] = {}
    for report in reports:
        account = await _account(stores, report.user_id, accounts)
        note = " ".join(report.note.split())  # one line per report, whatever the note holds
        print(f"{iso(report.created_at)}\t{iso(report.observed_at)}\t{account}\t{report.kind}\t{note}")
