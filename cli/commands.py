"""The CLI's subcommands. Each opens the configured store, does one thing, and closes it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from application import scheduler
from application.app import build_context, close_context, make_app
from application.http import make_server
from cli import bootstrap
from config.settings import Settings
from config.tiers import TIERS
from server.context import AppContext
from store import accounts
from store.base import Conflict, QuotaExceeded
from store.factory import make_stores
from store.ports import AccountStore, Stores
from store.query import IocFilters
from store.records import utcnow
from store.sqlite import SqliteStore
from telemetry import prepare_multiprocess

log = logging.getLogger("ctiwire.cli")


class CommandError(Exception):
    """A command failed for a reason the user can fix; printed without a traceback, exit ``exit_code``."""

    exit_code = 1


class PortBusy(CommandError):
    """The port to serve on is taken (one line naming it and how to choose another, exit 2)."""

    exit_code = 2


class FileError(CommandError):
    """A file that cannot be read or written, or a closed standard input: one line, exit 2."""

    exit_code = 2


def ensure_port_free(settings: Settings) -> None:
    """Fail fast, before seeding or forking, when something already listens on the configured address."""
    from tornado.netutil import bind_sockets

    try:
        for sock in bind_sockets(settings.port, settings.host):
            sock.close()
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise PortBusy(f"port {settings.port} on {settings.host} is already in use; choose another with "
                       f"--port N or CTIWIRE_PORT=N") from None


def progress_bar() -> Progress:
    """The progress bar of long CLI work (to stderr, so stdout stays parseable)."""
    from rich.console import Console

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=False)


class RebuildBar:
    """A progress bar for the re-encoding of a large SQLite database's stored list forms (a database made by
    an older release); small ones finish before a bar would be worth drawing."""

    MIN_ROWS = 10_000

    def __init__(self) -> None:
        self.bar: Progress | None = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None and total >= self.MIN_ROWS:
            self.bar = progress_bar()
            self.bar.start()
            self.task = self.bar.add_task("re-encoding stored articles", total=total)
        if self.bar is not None:
            self.bar.update(self.task, completed=done)
            if done >= total:
                self.bar.stop()


def configured_store(settings: Settings) -> Stores:
    """The stores of the configuration, drawing a bar should opening them re-encode a large database."""
    stores = make_stores(settings)
    if isinstance(stores.lifecycle, SqliteStore):
        stores.lifecycle.on_rebuild = RebuildBar()
    return stores


@contextlib.asynccontextmanager
async def opened_store(settings: Settings) -> AsyncIterator[Stores]:
    stores = configured_store(settings)
    await stores.open()
    try:
        yield stores
    finally:
        await stores.close()


async def seed_with_progress(stores: Stores, n: int) -> tuple[int, int]:
    from ingest.demo import seed_store

    with progress_bar() as bar:
        task = bar.add_task("seeding demo articles", total=n)
        result = await seed_store(stores, n, now=utcnow(), progress=lambda done: bar.update(task, completed=done))
    return result


async def seed(settings: Settings, args: argparse.Namespace) -> int:
    n = args.articles if args.articles is not None else settings.seed_articles
    if n < 1:
        raise CommandError("--articles must be at least 1")
    async with opened_store(settings) as stores:
        articles, iocs = await seed_with_progress(stores, n)
        print(f"seeded {articles} articles and {iocs} IOC records into {settings.backend_name}")
        if args.demo:
            await _seed_demo(stores.accounts, settings)
    return 0


async def _seed_demo(store: AccountStore, settings: Settings) -> None:
    try:
        await bootstrap.create_demo(store, settings.data_dir)
    except (Conflict, QuotaExceeded, accounts.AccountError) as exc:
        raise CommandError(f"the demo accounts could not be made: {exc}") from exc
    emails = " and ".join(bootstrap.demo_email(tier) for tier in bootstrap.TIERS)
    print(f"created the demo accounts {emails}, each with a new key {bootstrap.DEMO_KEY_NAME!r} and a new "
          f"password (earlier ones stop working); the secrets are in {settings.data_dir / bootstrap.DEMO_FILE}")


async def export(settings: Settings, args: argparse.Namespace) -> int:
    """``ctiwire export FORMAT --tier pro --window 7d [--type ipv4,ipv6] -o FILE`` (the same build the workers
    cache, or the API's for those filters)."""
    from exporters import precompute

    tier = TIERS[args.tier]
    window = args.window or precompute.default_window(tier.name)
    if window not in precompute.tier_windows(tier):
        raise CommandError(f"window {window} exceeds the {tier.name} lookback of {tier.ioc_lookback_days} days")
    limit = min(args.limit or tier.ioc_results_max, tier.ioc_results_max)
    filters = IocFilters(types=args.types, include_warninglisted=args.include_warninglisted)
    request = precompute.ExportRequest(args.format, tier.name, window, filters=filters, limit=limit)
    now = utcnow()
    _write_output(args.output, None)  # an unwritable place is refused before the work, not after
    async with opened_store(settings) as stores:
        total = await stores.iocs.count_iocs(request.query(now))
        with progress_bar() as bar:
            task = bar.add_task(f"exporting {args.format}", total=min(total, limit))
            entry = await precompute.build_export(stores, request, now, await stores.iocs.data_version(),
                                            progress=lambda done: bar.update(task, completed=done))
    _write_output(args.output, entry.body)
    print(f"wrote {entry.meta.rows} IOCs as {args.format} ({len(entry.body)} bytes) to {args.output}",
          file=sys.stderr)
    return 0


def _write_output(path: str, body: bytes | None) -> None:
    """``body`` to ``path`` through a ``.part`` file; None only proves that the file can be written."""
    if path == "-":
        sys.stdout.buffer.write(body or b"")
        sys.stdout.flush()
        return
    target = Path(path)
    tmp = target.with_name(target.name + ".part")
    try:
        tmp.write_bytes(body or b"")
        if body is None:
            tmp.unlink()
        else:
            os.replace(tmp, target)  # never leave a half-written export behind
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror}") from None


def _exec_celery(settings: Settings, role: str, extra: list[str]) -> int:
    """Replace this process with Celery (the server never imports workers: it names the app)."""
    if not settings.redis_url:
        raise CommandError(f"ctiwire {role} needs CTIWIRE_REDIS_URL (the Celery broker)")
    argv = [sys.executable, "-m", "celery", "-A", "workers.app", role, "--loglevel", settings.log_level]
    if role == "beat":
        argv += ["--schedule", str(settings.data_dir / "celerybeat-schedule")]
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    os.execv(sys.executable, argv + extra)
    return 0  # not reached


async def worker(settings: Settings, args: argparse.Namespace) -> int:
    return _exec_celery(settings, "worker", list(args.celery_args))


async def beat(settings: Settings, args: argparse.Namespace) -> int:
    return _exec_celery(settings, "beat", list(args.celery_args))


async def _bootstrap(ctx: AppContext, seed_empty: bool) -> None:
    """Before serving: the demo dataset into an empty embedded database, and the demo accounts of the
    embedded default (cli.bootstrap). A production configuration gets neither and prints no secret."""
    from store.query import ArticleQuery

    if seed_empty and not await ctx.articles.count_articles(ArticleQuery(include_archived=True, limit=1), exact=False):
        await seed_with_progress(ctx.stores, ctx.settings.seed_articles)
    if not ctx.settings.embedded:
        return
    data_dir = ctx.settings.data_dir
    if await bootstrap.is_first_start(ctx.accounts, data_dir):
        lines = bootstrap.first_start_lines(await bootstrap.create_demo(ctx.accounts, data_dir))
    else:
        lines = await bootstrap.demo_status(ctx.accounts, data_dir)
    print("\n".join(lines))
    print(f"(also in {data_dir / bootstrap.DEMO_FILE}); sign in at http://{ctx.settings.host}:"
          f"{ctx.settings.port}/account/signin", flush=True)


async def serve(settings: Settings, args: argparse.Namespace, sockets: list[socket.socket] | None = None) -> int:
    """Run one server process; ``sockets`` are pre-bound when several processes share the port."""
    if args.port is not None:
        settings = settings.replace(port=args.port)
    if sockets is None:
        ensure_port_free(settings)
    ctx = await build_context(settings, configured_store(settings))
    try:
        if sockets is None:
            await _bootstrap(ctx, seed_empty=not args.no_seed and settings.backend_name == "sqlite")
        try:
            server = make_server(make_app(ctx), settings.trusted_proxies)
        except ValueError as exc:
            raise CommandError(f"setting 'trusted_proxies' (CTIWIRE_TRUSTED_PROXIES): {exc}") from exc
        if sockets is None:
            server.listen(settings.port, settings.host)
        else:
            server.add_sockets(sockets)
        print(f"ctiwire listening on http://{settings.host}:{settings.port} "
              f"(database {settings.backend_name}, cache {settings.cache_name})", flush=True)
        background = scheduler.start(ctx, scheduler.embedded_jobs(ctx))
        await _until_signalled()
        server.stop()
        await scheduler.stop(background)
        await asyncio.wait_for(server.close_all_connections(), timeout=10)
    finally:
        await close_context(ctx)
    log.info("ctiwire stopped")  # a log record, so CTIWIRE_LOG_FORMAT=json keeps one object a line
    return 0


def serve_processes(settings: Settings, args: argparse.Namespace) -> int:
    """Several Tornado processes on one port (tornado.process.fork_processes): bootstrap, bind, fork."""
    from tornado.netutil import bind_sockets
    from tornado.process import fork_processes

    if args.port is not None:
        settings = settings.replace(port=args.port)
    ensure_port_free(settings)
    # Every forked process writes its metrics where any of them can add them up for GET /metrics.
    prepare_multiprocess(str(settings.data_dir / "metrics"))
    asyncio.run(_bootstrap_only(settings, seed_empty=not args.no_seed and settings.backend_name == "sqlite"))
    sockets = bind_sockets(settings.port, settings.host)
    fork_processes(settings.processes)  # returns in each child; the parent restarts children that crash
    _stop_with_parent()
    return asyncio.run(serve(settings, args, sockets))


def _stop_with_parent() -> None:
    """Ask Linux to send this child SIGTERM when the parent dies (prctl PR_SET_PDEATHSIG).

    Stopping the server means signalling the process that was started; fork_processes' parent does not
    forward signals, so without this its children would go on serving the port as orphans.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the parent died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


async def _bootstrap_only(settings: Settings, seed_empty: bool) -> None:
    ctx = await build_context(settings, configured_store(settings))
    try:
        await _bootstrap(ctx, seed_empty)
    finally:
        await close_context(ctx)


async def _until_signalled() -> None:
    """Wait for SIGINT or SIGTERM: both stop the server cleanly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
