"""SQLite after a SIGKILL: a writer killed in the middle of a bulk write (the seed), of an
ingestion from local feeds, or of key creation leaves a database that opens with ``PRAGMA integrity_check``
ok and no half-written record."""

from __future__ import annotations

import fcntl
import os
import signal
import sqlite3
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import pytest
import yaml
from support import VENV_BIN, cli_env, ctiwire, wait_for

from store.apikeys import hash_key

pytestmark = pytest.mark.slow  # CLI processes killed mid-write


def _check(db_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    return db


def test_a_bulk_write_killed_midway_leaves_whole_records(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "seed", "--articles", "10")  # the schema exists: the kill lands in the bulk write
    proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "seed", "--articles", "30000"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _until_written(tmp_path / "ctiwire.sqlite3", more_than=10)  # the 30,000-article write has begun
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    db = _check(tmp_path / "ctiwire.sqlite3")
    rows = db.execute("SELECT id, doc, list_json FROM articles").fetchall()
    assert 10 < len(rows) < 30000, "the kill did not land mid-write"
    for row_id, doc, listed in rows:  # every article is whole: its document and its list form agree
        assert orjson.loads(doc)["id"] == row_id and orjson.loads(listed)["id"] == row_id
    iocs = db.execute("SELECT type, value, doc FROM iocs").fetchall()
    assert all(orjson.loads(doc)["value"] == value for _, value, doc in iocs)
    db.close()
    assert "seeded" in ctiwire(env, "seed", "--articles", "50")  # and it keeps working


def test_key_creation_killed_at_any_moment_leaves_no_half_key(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", "ana@corp.example", "--tier", "pro")
    delivered = set()  # hashes of the secrets that reached the caller
    for n in range(12):
        proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "keys", "create", "ana@corp.example", "--name", f"k{n}"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        time.sleep(0.05 * n)  # from before the store opens to after the insert
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
        delivered |= {hash_key(line) for line in out.splitlines() if line.startswith("sk_live_")}
    db = _check(tmp_path / "ctiwire.sqlite3")
    keys = db.execute("SELECT name, key_hash, prefix, scopes FROM api_keys").fetchall()
    working = {row[0] for row in db.execute("SELECT key_hash FROM api_keys WHERE active = 1")}
    db.close()
    assert working <= delivered, "a key works whose secret nobody received"
    for name, key_hash, prefix, scopes in keys:
        assert len(key_hash) == 64 and prefix.startswith("sk_live_") and orjson.loads(scopes), name
    listing = ctiwire(env, "keys", "list", "ana@corp.example").splitlines()[1:]
    assert sorted(line.split("\t")[0] for line in listing) == sorted(name for name, *_ in keys)


def _full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is already full and never read: a process printing to it blocks in the write."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) | os.O_NONBLOCK)
    try:
        while True:
            os.write(write_end, b"x" * 65536)
    except BlockingIOError:
        pass
    fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return read_end, write_end


def test_key_creation_killed_before_the_secret_is_printed_leaves_no_working_key(tmp_path: Path) -> None:
    """The key is saved, its secret stuck on the way out (stdout blocked), then SIGKILL: nobody holds the
    secret, so the key must not authenticate, and ``keys list`` says it was never delivered."""
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", "ana@corp.example", "--tier", "pro")
    read_end, write_end = _full_pipe()
    proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "keys", "create", "ana@corp.example", "--name", "stuck"],
                            env=env, stdout=write_end, stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        def saved() -> bool:
            with sqlite3.connect(tmp_path / "ctiwire.sqlite3") as db:
                return db.execute("SELECT count(*) FROM api_keys WHERE name = 'stuck'").fetchone()[0] == 1
        wait_for(saved, 60, "the key row")
        assert proc.poll() is None, "the CLI ended although its output could not be written"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        os.close(read_end)
    db = _check(tmp_path / "ctiwire.sqlite3")
    assert db.execute("SELECT active FROM api_keys WHERE name = 'stuck'").fetchone()[0] == 0
    db.close()
    listing = ctiwire(env, "keys", "list", "ana@corp.example").splitlines()[1:]
    assert [line.split("\t")[:3][::2] for line in listing] == [["stuck", "never delivered"]]


class _Feeds(BaseHTTPRequestHandler):
    """Eight RSS feeds of 50 items each, and slow article pages: an ingestion that takes seconds. The pages
    of feeds 1-7 are held until ``release`` is set (or ten minutes have passed), so a kill after feed 0's
    articles are written lands mid-ingestion however loaded the machine (a cold start that trains the
    technique classifier took over two minutes beside a busy suite)."""

    release = threading.Event()

    def do_GET(self) -> None:
        host = f"http://{self.headers['Host']}"
        if self.path.startswith("/feed/"):
            n = self.path.rsplit("/", 1)[1]
            items = "".join(f"<item><title>Loader wave {n}-{i} hits logistics</title><link>{host}/a/{n}/{i}</link>"
                            f"<pubDate>Mon, 24 Nov 2026 10:{i:02d}:00 GMT</pubDate></item>" for i in range(50))
            self._send(f'<?xml version="1.0"?><rss version="2.0"><channel><title>F{n}</title>{items}'
                       "</channel></rss>", "application/rss+xml")
            return
        n, i = self.path.split("/")[2:4]
        if n != "0":  # every later feed waits until the test lets it go: the kill lands mid-ingestion
            _Feeds.release.wait(timeout=600)
        time.sleep(0.02)
        self._send(f"<html><head><title>Loader wave {n}-{i}</title></head><body><article><h1>Loader wave</h1>"
                   f"<p>The loader beacons to its C2 server at 45.61.{n}.{i} and fetches a payload from "
                   f"hxxp://wave-{n}-{i}[.]top/p.bin, researchers said in a long report on the campaign.</p>"
                   "</article></body></html>", "text/html")

    def _send(self, body: str, media: str) -> None:
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_: object) -> None:
        pass


def test_ingestion_killed_midway_leaves_whole_records_and_the_next_run_completes(tmp_path: Path) -> None:
    # Feed 0 on one server, feeds 1-7 on another: the collector takes one request at a time per host and
    # port, so feed 0 is written while the others wait for ``release``.
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), _Feeds) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    bases = [f"http://127.0.0.1:{server.server_address[1]}" for server in servers]
    sources = [{"name": f"Feed {n}", "homepage": bases[n > 0], "feed_url": f"{bases[n > 0]}/feed/{n}",
                "source_type": "rss", "source_tier": 2, "category": "commercial", "enabled": True} for n in range(8)]
    (tmp_path / "sources.yaml").write_text(yaml.safe_dump({"sources": sources}))
    env = cli_env(tmp_path, CTIWIRE_SOURCES_FILE=str(tmp_path / "sources.yaml"))
    _Feeds.release.clear()
    try:
        proc = subprocess.Popen([str(VENV_BIN / "ctiwire"), "ingest", "--once"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _until_written(tmp_path / "ctiwire.sqlite3", more_than=0)  # the first source's articles are written
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        _Feeds.release.set()
        db = _check(tmp_path / "ctiwire.sqlite3")
        rows = db.execute("SELECT id, doc, list_json FROM articles").fetchall()
        assert 0 < len(rows) < 400, "the kill did not land mid-ingestion"
        for row_id, doc, listed in rows:
            assert orjson.loads(doc)["id"] == row_id and orjson.loads(listed)["id"] == row_id
        db.close()
        done = subprocess.run([str(VENV_BIN / "ctiwire"), "ingest", "--once"], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr  # the next run finds what is missing and adds it
        db = _check(tmp_path / "ctiwire.sqlite3")
        assert db.execute("SELECT count(*) FROM articles").fetchone()[0] == 400, done.stderr
        assert db.execute("SELECT count(*) FROM iocs WHERE type = 'ipv4'").fetchone()[0] == 400
        db.close()
    finally:
        _Feeds.release.set()
        for server in servers:
            server.shutdown()


def _until_written(path: Path, more_than: int) -> None:
    """Wait (polling, up to ten minutes: a loaded machine) until the database at ``path`` holds more than
    ``more_than`` articles."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and _articles(path) <= more_than:
        time.sleep(0.02)


def _articles(path: Path) -> int:
    try:
        with sqlite3.connect(path, timeout=0.05) as db:
            return int(db.execute("SELECT count(*) FROM articles").fetchone()[0])
    except sqlite3.Error:
        return 0
