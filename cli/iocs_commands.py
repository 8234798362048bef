"""``ctiwire iocs``: maintenance of the stored IOC records."""

from __future__ import annotations

import argparse
import sys

from cli.commands import opened_store, progress_bar
from config.settings import Settings
from ingest.recheck import recheck as recheck_records


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    iocs = sub.add_parser("iocs", help="maintain the stored IOC records")
    actions = iocs.add_subparsers(dest="iocs_command", required=True)
    actions.add_parser(
        "recheck",
        help="check every stored IOC against the shipped MISP warninglists again "
        "(after an upgrade of pymispwarninglists; the worker runs it at start)",
    )


async def iocs(settings: Settings, args: argparse.Namespace) -> int:
    async with opened_store(settings) as stores:
        with progress_bar() as bar:
            task = bar.add_task("checking IOCs against the warninglists", total=None)
            report = await recheck_records(
                stores.iocs, progress=lambda done, total: bar.update(task, completed=done, total=total)
            )
    print(
        f"{report.checked} IOC records checked against warninglists {report.version}: "
        f"{len(report.listed)} newly listed, {len(report.unlisted)} no longer listed",
        file=sys.stderr,
    )
    return 0
