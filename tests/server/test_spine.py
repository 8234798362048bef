"""The spine through real HTTP: health, error envelope for 404/405, OpenAPI validity, request ids."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from openapi_spec_validator import validate

from application.app import openapi_document
from server.base import new_request_id


async def test_healthz_needs_no_key_and_names_backends_to_a_pro_key(server) -> None:
    async with server.client() as http:
        response = await http.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": "1.0.0", "database": {"status": "ok"},
                               "cache": {"status": "ok"}}
    assert response.headers["X-Request-Id"].startswith("req_")
    async with server.client(server.pro_key) as http:
        body = (await http.get("/healthz")).json()
    assert body["database"]["backend"] == server.ctx.stores.name
    assert body["cache"]["cache"] == "memory"
    async with server.client(server.free_key) as http:
        assert (await http.get("/healthz")).json()["database"] == {"status": "ok"}


async def test_unknown_path_is_the_envelope_404(server) -> None:
    async with server.client(server.pro_key) as http:
        response = await http.get("/api/v1/nothing-here")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "not_found"
    assert error["request_id"] == response.headers["X-Request-Id"]
    assert response.headers["Content-Type"].startswith("application/json")


async def test_wrong_method_is_the_envelope_405(server) -> None:
    async with server.client() as http:
        response = await http.post("/healthz", content=b"{}")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert "GET" in response.headers["Allow"]


async def test_openapi_is_served_and_valid(server) -> None:
    async with server.client() as http:
        response = await http.get("/api/openapi.json")
    assert response.status_code == 200
    document = response.json()
    validate(document)
    assert document["openapi"] == "3.0.3"
    assert document["info"]["version"] == "1.0.0"
    schemes = document["components"]["securitySchemes"]
    assert {s.get("scheme") or s["name"] for s in schemes.values()} == {"bearer", "X-API-Key", "api_key", "basic"}
    basic = {path for path, item in document["paths"].items()
             if {"BasicAuth": []} in item.get("get", {}).get("security", [])}
    assert basic == {p for p in document["paths"] if p.startswith(("/api/taxii2/", "/api/v1/iocs/"))
                     and p not in ("/api/v1/iocs/search", "/api/v1/iocs/stats")
                     or p.startswith("/api/v1/feeds/{id}/export/")} | {"/api/v1/articles"}
    assert document == openapi_document()


async def test_request_ids_are_unique(server) -> None:
    async with server.client() as http:
        ids = {(await http.get("/healthz")).headers["X-Request-Id"] for _ in range(5)}
    assert len(ids) == 5


def test_forked_server_processes_draw_their_own_request_ids() -> None:
    """CTIWIRE_PROCESSES forks after import: each child must not repeat its siblings' ids."""
    children = []
    for n in range(2):  # two separate children: one pool worker could otherwise run both calls
        with multiprocessing.get_context("fork").Pool(1) as pool:
            children.append(pool.apply(_two_ids, (n,)))
    ours = _two_ids(0)
    prefixes = {ids[0][:16] for ids in [*children, ours]}
    assert len(prefixes) == 3
    assert all(a != b and a[:16] == b[:16] for a, b in [*children, ours])


def _two_ids(_: int) -> tuple[str, str]:
    return new_request_id(), new_request_id()


@pytest.mark.slow  # several server processes
def test_several_server_processes_serve_one_port_and_stop_together(tmp_path) -> None:
    """CTIWIRE_PROCESSES=2: both children answer; stopping the started process stops them too."""
    import httpx
    from support import cli_env, spawn_server, wait_for

    server = spawn_server(cli_env(tmp_path, CTIWIRE_PROCESSES="2"), "--no-seed")
    children = _children(server.process.pid)
    try:
        wait_for(lambda: len(_children(server.process.pid)) == 2, 30, "two server processes")
        children = _children(server.process.pid)
        assert all(httpx.get(server.url + "/healthz", timeout=5).status_code == 200 for _ in range(10))
    finally:
        server.stop()
    wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in children), 30, "the children to stop")


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found
