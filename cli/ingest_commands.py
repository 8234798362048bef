"""``ctiwire ingest`` and ``ctiwire enrich``: collection and enrichment from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

from cli.commands import CommandError, FileError, opened_store, progress_bar
from config.settings import Settings
from config.sources import SourceConfigError, load_sources
from exporters import ioc_stats, precompute
from ingest.enrich import enrich_file
from ingest.files import file_fetcher, file_source
from ingest.pipeline import IngestReport, ingest_once
from ingest.reprocess import every_article, reprocess
from store.factory import make_cache
from store.ports import Stores
from store.records import utcnow


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser("ingest", help="collect the configured sources into the database")
    run.add_argument("--source", help="collect only this source (its exact name)")
    run.add_argument("--once", action="store_true", help="one pass, then exit (default: every ingest interval)")
    run.add_argument("--file", type=Path, action="append", default=[], metavar="FEED.xml|ARTICLE.html",
                     help="collect this local feed or article page (offline: pages on the web are not fetched); "
                          "repeatable; implies --once")
    run.add_argument("--source-name", default="Local files", help="the source name of --file articles")
    one = sub.add_parser("enrich", help="run the enrichment on text or HTML files, or again on the stored articles")
    one.add_argument("files", nargs="*", type=Path, help="text files (first line: the title) or HTML files")
    one.add_argument("--format", choices=("json",), default="json", help="output format")
    one.add_argument("--explain", action="store_true",
                     help="add why: severity_reasons, and attack_evidence (each technique's id, phrase or sentence)")
    one.add_argument("--reprocess", action="store_true",
                     help="re-enrich every stored article and recompute the IOC records (after a rules update)")


async def _pass(settings: Settings, stores: Stores, args: argparse.Namespace) -> IngestReport:
    try:
        sources = load_sources(settings)
    except SourceConfigError as exc:
        raise CommandError(str(exc)) from exc
    chosen = [s for s in sources if (s.name == args.source if args.source else s.enabled)]
    if args.source and not chosen:  # say so before drawing a progress bar
        raise CommandError(f"unknown source {args.source!r}; the configured sources are listed in "
                           f"{settings.sources_file or 'config/sources.yaml'} (see GET /api/v1/sources)")
    with progress_bar() as bar:
        task = bar.add_task("collecting sources", total=len(chosen))
        try:
            report = await ingest_once(stores, sources, only=args.source,
                                       progress=lambda _name, _changed: bar.advance(task))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
    return report


async def _rebuild(settings: Settings, stores: Stores) -> None:
    """With Redis, refresh the shared cache now; the embedded server notices the new data version itself."""
    if not settings.redis_url:
        return
    cache = make_cache(settings)
    try:
        await precompute.precompute_exports(stores, cache, utcnow(), ttl=settings.cache_ttl_seconds)
        await ioc_stats.precompute_every_stats(stores.iocs, cache, utcnow(), settings.cache_ttl_seconds)
    finally:
        await cache.close()


def _summary(report: IngestReport) -> str:
    failed = "".join(f"\n  failed: {name}: {error}" for name, error in sorted(report.failed.items()))
    failed += "".join(f"\n  articles skipped or partly enriched: {name}: {count}"
                      for name, count in sorted(report.failed_articles.items()))
    return (f"{report.sources} sources, {report.items_seen} items seen, {report.articles_new} new and "
            f"{report.articles_updated} updated articles, {report.ioc_records} IOC records{failed}")


async def _from_files(settings: Settings, stores: Stores, args: argparse.Namespace) -> int:
    """``--file``: each file collected as a source of its own, through the same pipeline as a feed."""
    report = IngestReport()
    for path in args.file:
        fetcher = file_fetcher()
        try:
            source = file_source(path, args.source_name, fetcher)
        except OSError as exc:
            raise FileError(f"cannot read {path}: {exc.strerror or exc}") from exc
        one = await ingest_once(stores, [source], fetcher=fetcher)
        for name in ("sources", "items_seen", "articles_new", "articles_updated", "ioc_records"):
            setattr(report, name, getattr(report, name) + getattr(one, name))
        report.failed.update({f"{path}": error for error in one.failed.values()})
    print(_summary(report), file=sys.stderr)
    if report.articles_changed:
        await _rebuild(settings, stores)
    return 1 if report.failed else 0


async def ingest(settings: Settings, args: argparse.Namespace) -> int:
    async with opened_store(settings) as stores:
        if args.file:
            return await _from_files(settings, stores, args)
        while True:
            report = await _pass(settings, stores, args)
            print(_summary(report), file=sys.stderr)
            if report.articles_changed:
                await _rebuild(settings, stores)
            if args.once:
                return 0 if len(report.failed) < report.sources or not report.sources else 1
            await asyncio.sleep(settings.ingest_interval_seconds)


async def enrich(settings: Settings, args: argparse.Namespace) -> int:
    if args.reprocess == bool(args.files):
        raise CommandError("give files to enrich, or --reprocess (alone) to re-enrich the stored articles")
    if args.reprocess:
        return await _reprocess(settings)
    results: dict[str, dict[str, object]] = {}
    unread = 0
    for key, path in _result_keys(args.files):
        try:
            _, found = enrich_file(path)
        except OSError as exc:  # every other file still gets its result (README, "Enrich")
            unread += 1
            results[key] = {"error": f"{path}: {exc.strerror or exc}"}
            continue
        results[key] = found.to_cli(explain=args.explain)
    _print_json(results)
    return 1 if unread else 0


def _print_json(document: object) -> None:
    """UTF-8 whatever the locale declares (RFC 8259 section 8.1): an ASCII or Latin-1 terminal or pipe would
    raise on the first value outside it, after every file was enriched, and print nothing."""
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def _result_keys(paths: list[Path]) -> list[tuple[str, Path]]:
    """Each file's key in the output: its name without suffix, or the path as given when another file
    has that name too (``a/report.txt b/report.txt``), so that every file keeps its own result."""
    stems = Counter(path.stem for path in paths)
    return [(path.stem if stems[path.stem] == 1 else str(path), path) for path in paths]


async def _reprocess(settings: Settings) -> int:
    try:
        categories = {source.name: source.category for source in load_sources(settings)}
    except SourceConfigError as exc:
        raise CommandError(str(exc)) from exc
    async with opened_store(settings) as stores:
        total = await stores.articles.count_articles(every_article(), exact=True)
        with progress_bar() as bar:
            task = bar.add_task("re-enriching stored articles", total=total)
            report = await reprocess(stores, categories, utcnow(), progress=lambda n: bar.advance(task, n))
        if report.changed:
            await _rebuild(settings, stores)
    print(f"{report.articles} articles re-enriched, {report.changed} changed, "
          f"{report.ioc_records} IOC records", file=sys.stderr)
    return 0
