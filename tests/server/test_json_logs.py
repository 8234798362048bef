"""CTIWIRE_LOG_FORMAT=json: one JSON object a line, the access line with the request's fields."""

from __future__ import annotations

import json

import httpx
import pytest
from support import cli_env, spawn_server

pytestmark = pytest.mark.slow  # a server process


def test_json_logs_carry_the_request_fields(tmp_path) -> None:
    server = spawn_server(cli_env(tmp_path, CTIWIRE_LOG_FORMAT="json", CTIWIRE_LOG_LEVEL="INFO"), "--no-seed")
    demo = json.loads((tmp_path / "demo-keys.json").read_text())
    try:
        answer = httpx.get(server.url + "/api/v1/iocs", params={"limit": 1, "api_key": demo["pro"]})
        assert answer.status_code == 200
    finally:
        server.stop()
    lines = [line for line in (server.process.stderr.read() if server.process.stderr else "").splitlines() if line]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    access = next(r for r in records if r["logger"] == "ctiwire.access" and r["path"] == "/api/v1/iocs")
    assert access["method"] == "GET" and access["status"] == 200 and access["client"] == "127.0.0.1"
    assert access["request_id"] == answer.headers["X-Request-Id"] and access["duration_ms"] >= 0
    assert access["key"] == demo["pro"][8:12] and access["user_id"] and access["level"] == "INFO"
    assert access["time"].endswith("Z") and demo["pro"] not in "\n".join(lines)
    assert "api_key" not in access["path"]  # the path never carries the query


def test_an_unknown_log_format_is_a_clear_error(tmp_path) -> None:
    import subprocess

    from support import VENV_BIN

    done = subprocess.run([str(VENV_BIN / "ctiwire"), "seed", "--articles", "1"],
                          env=cli_env(tmp_path, CTIWIRE_LOG_FORMAT="xml"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "log_format" in done.stderr and "Traceback" not in done.stderr
