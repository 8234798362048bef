"""The production processes start from the runtime dependencies alone, built from exactly the files the
Dockerfile copies.

The test suite's environment holds the dev tools too, and one of them once supplied a package that
kombu's Redis transport needs at run time (``packaging``), so ``ctiwire worker`` died on a fresh
``pip install .`` while every test passed. Here the project is installed as the Dockerfile installs it
(``pip install .``, no extras) into a new virtual environment, and ``ctiwire worker`` and ``ctiwire serve``
are started from it against a real redis-server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import httpx
import pytest
from support import REPO, RedisServer, cli_env, free_port, wait_for

from ingest.enrich import leads, procedures

pytestmark = [pytest.mark.redis, pytest.mark.slow]  # a fresh install of the runtime dependencies


@pytest.fixture(scope="module")
def runtime_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("runtime-venv")
    venv.EnvBuilder(with_pip=True).create(target)
    source = tmp_path_factory.mktemp("src") / "ctiwire"  # what the Dockerfile copies, and nothing else
    source.mkdir()
    for line in (REPO / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            *items, into = line.split()[1:]
            for item in items:
                destination = source / (item if into.endswith("/") else into)
                if (REPO / item).is_dir():
                    shutil.copytree(REPO / item, destination, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    shutil.copy(REPO / item, destination)
    done = subprocess.run([str(target / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                           str(source)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return target / "bin"


def test_worker_and_server_start_from_the_runtime_install(runtime_bin: Path, tmp_path: Path,
                                                          redis_server: RedisServer) -> None:
    env = cli_env(tmp_path, CTIWIRE_REDIS_URL=redis_server.url, CTIWIRE_LOG_LEVEL="INFO")
    env["PATH"] = f"{runtime_bin}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen([str(runtime_bin / "ctiwire"), "worker", "--pool", "solo", "--without-gossip",
                                   "--without-mingle"], env=env, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
    port = free_port()
    server = subprocess.Popen([str(runtime_bin / "ctiwire"), "serve", "--no-seed", "--port", str(port)], env=env,
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: b"ready" in log.read_bytes() or worker.poll() is not None, 90, "the worker to start")
        assert worker.poll() is None, log.read_text()[-3000:]
        assert "ModuleNotFoundError" not in log.read_text()

        def healthy() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(healthy, 60, "the server to answer /healthz")
        assert server.poll() is None
    finally:
        for proc in (worker, server):
            proc.terminate()
            proc.wait(timeout=20)
    assert sys.executable not in str(runtime_bin)


def test_the_image_trains_the_classifiers_once_and_enrich_reads_them(runtime_bin: Path, tmp_path: Path) -> None:
    """The Dockerfile's build steps (``python -m ingest.enrich.procedures``, ``python -m ingest.enrich.leads``)
    keep the models where the image's processes read them; ``ctiwire enrich`` then uses them without training."""
    env = cli_env(tmp_path, CTIWIRE_MODEL_DIR=str(tmp_path / "models"))
    env.pop("PYTHONPATH", None)
    for module in ("ingest.enrich.procedures", "ingest.enrich.leads"):
        trained = subprocess.run([str(runtime_bin / "python"), "-m", module], env=env, cwd=tmp_path,
                                 capture_output=True, text=True, timeout=300)
        assert trained.returncode == 0, trained.stderr[-3000:]
    # the installed package carries the report prose and the labelled leads: it trains the models this tree names
    models = {path.name: path.stat().st_mtime_ns for path in (tmp_path / "models").iterdir()}
    assert set(models) == {f"attack-procedures-{procedures.fingerprint()}.npz", f"leads-{leads.fingerprint()}.npz"}
    article = tmp_path / "note.txt"
    article.write_text("Screens\nThe implant captures the desktop every thirty seconds and uploads the screenshot.\n")
    done = subprocess.run([str(runtime_bin / "ctiwire"), "enrich", str(article), "--explain"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "T1113: classifier" in done.stdout and "title and lead read as" in done.stdout
    assert {path.name: path.stat().st_mtime_ns for path in (tmp_path / "models").iterdir()} == models
