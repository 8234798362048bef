"""Helpers shared by the scripts/bench_*.py benchmarks: load generation and waiting for a quiet server."""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import time
import urllib.parse
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson

from store.records import Ioc, utcnow
from store.sqlite import sqlite_stores


class LeanClient:
    """GET over one kept-alive connection with the standard library's ``http.client``, for timing large
    bodies: its chunked reader costs the client less than httpx's (BENCHMARKS.md: a 4 MB IOC page
    read faster from the same server), so the time measured is the server's."""

    def __init__(self, base_url: str, headers: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(base_url)
        self.connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=300)
        self.headers = headers

    def get(self, path: str, params: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
        """The body and headers of a 200 answer (anything else raises)."""
        self.connection.request("GET", f"{path}?{urllib.parse.urlencode(params)}", headers=self.headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path} answered {response.status}: {body[:200]!r}")
        return body, dict(response.getheaders())

    def post_json(self, path: str, payload: Any) -> tuple[bytes, dict[str, str]]:
        """POST ``payload`` as JSON: the body and headers of a 200 answer (anything else raises)."""
        body = orjson.dumps(payload)
        self.connection.request("POST", path, body=body, headers={**self.headers, "Content-Type": "application/json"})
        response = self.connection.getresponse()
        answer = response.read()
        if response.status != 200:
            raise RuntimeError(f"POST {path} answered {response.status}: {answer[:200]!r}")
        return answer, dict(response.getheaders())

    def close(self) -> None:
        self.connection.close()


def settle(pid: int, quiet: float = 1.5, timeout: float = 180) -> None:
    """Wait until process ``pid`` used no CPU for ``quiet`` seconds: a fresh ctiwire server precomputes the
    exports in the background (embedded mode), which would otherwise be timed as part of the measure."""
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    deadline = time.monotonic() + timeout
    last, still = cpu(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = cpu()
        if now - last > 0.02:
            last, still = now, time.monotonic()
        elif time.monotonic() - still >= quiet:
            return


def _latency(out: str, pct: str) -> float:
    match = re.search(rf"{pct}\s+([\d.]+)(us|ms|s)\b", out)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def wrk(url: str, headers: list[str], seconds: int, connections: int) -> dict[str, float]:
    """requests/s, p50 and p99 (ms) and non-2xx count; wrk is bounded by -d plus a generous margin."""
    flags = [x for h in headers for x in ("-H", h)]
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", f"{seconds}s", "--latency",
                          *flags, url], capture_output=True, text=True, check=True, timeout=seconds + 60).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": rps, "p50": _latency(out, "50%"), "p99": _latency(out, "99%"),
            "non2xx": float(bad.group(1)) if bad else 0.0}


def synthetic_iocs(n: int, minutes_ago: Callable[[int], float], technique_every: int = 0) -> list[Ioc]:
    """``n`` distinct indicators of five types from 30 feeds; ``minutes_ago(i)`` places each in time."""
    now = utcnow()
    rows = []
    for i in range(n):
        kind = ("ipv4", "domain", "url", "sha256", "md5")[i % 5]
        value = {"ipv4": f"45.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}", "domain": f"c2-{i}.bad-host.net",
                 "url": f"http://c2-{i}.bad-host.net/gate.php?id={i}", "sha256": f"{i:064x}",
                 "md5": f"{i:032x}"}[kind]
        seen = now - timedelta(minutes=minutes_ago(i))
        techniques = ["T1071.001"] if technique_every and i % technique_every == 0 else []
        rows.append(Ioc(kind, value, ("high", "medium", "low")[i % 3], f"Feed {i % 30}",
                        ("government", "commercial", "community")[i % 3], seen, seen, seen,
                        sources=[f"Feed {i % 30}"], techniques=techniques))
    return rows


async def seed_iocs(data_dir: Path, rows: list[Ioc]) -> None:
    """Write ``rows`` into the embedded database of ``data_dir``."""
    stores = sqlite_stores(data_dir / "ctiwire.sqlite3")
    await stores.open()
    for start in range(0, len(rows), 5000):
        await stores.iocs.upsert_iocs(rows[start:start + 5000])
    await stores.close()


def pro_key(env: dict[str, str]) -> str:
    """A Pro user and key made through the CLI, as an operator would; returns the key's secret."""
    from support import ctiwire

    ctiwire(env, "users", "create", "bench@ctiwire.local", "--tier", "pro")
    return ctiwire(env, "keys", "create", "bench@ctiwire.local", "--name", "bench").strip().splitlines()[-1]
