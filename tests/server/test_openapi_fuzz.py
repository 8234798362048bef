"""Schemathesis against the running service: every documented operation, generated requests, and the
responses checked against the OpenAPI description (no 5xx, documented statuses, content types, schemas)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
import schemathesis_hooks  # noqa: F401  (registers the Sigma YAML-stream reader and the TAXII Accept header)
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from support import ServerProcess, cli_env, spawn_server

pytestmark = pytest.mark.slow  # schemathesis over every operation

# Parameters carry rules a JSON schema does not state (a STIX type name, an indicator of a known type,
# parameters that exclude each other such as `severity` with `min_severity`): a 400 for such schema-valid
# input is by design, documented in each parameter's description and in the operation's 400 response.
# Every other check runs, on every operation (the Sigma YAML stream included: tests/schemathesis_hooks.py).
EXCLUDED = [checks.positive_data_acceptance]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, str]]]:
    data = tmp_path_factory.mktemp("fuzz")
    server = spawn_server(cli_env(data, CTIWIRE_SEED_ARTICLES="300", CTIWIRE_RATE_LIMIT_SCALE="100000"))
    keys = json.loads(Path(data, "demo-keys.json").read_text())
    yield server, keys
    server.stop()


@pytest.fixture(scope="module")
def api_schema(live: tuple[ServerProcess, dict[str, str]]) -> Any:
    server, _ = live
    loaded = schemathesis.openapi.from_url(server.url + "/api/openapi.json")
    loaded.config.update(base_url=server.url)
    return loaded


# More examples for a long run by hand: CTIWIRE_FUZZ_EXAMPLES=500 scripts/test tests/server/test_openapi_fuzz.py
EXAMPLES = int(os.environ.get("CTIWIRE_FUZZ_EXAMPLES", "25"))


def _documented(url: str) -> set[str]:
    """Every operation of the served description but the description itself (schemathesis skips it)."""
    document = httpx.get(url + "/api/openapi.json", timeout=30).json()
    return {f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item
            if path != "/api/openapi.json"}


@pytest.mark.parametrize("tier", ["pro", "free"])
def test_every_operation_honours_its_description(api_schema: Any, live: tuple[ServerProcess, dict[str, str]],
                                                 tier: str) -> None:
    server, keys = live
    headers = {"Authorization": f"Bearer {keys[tier]}"}
    exercised: set[str] = set()
    for result in api_schema.get_all_operations():
        operation = result.ok()
        _fuzz(operation, server.url, headers, exercised)
    # None skipped, none left behind a crashed parser: the count is the description's (22 operations).
    assert exercised == _documented(server.url) and len(exercised) >= 22


def _fuzz(operation: Any, base_url: str, headers: dict[str, str], exercised: set[str]) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def check(case: Any) -> None:
        case.call_and_validate(base_url=base_url, headers=headers, excluded_checks=EXCLUDED)
        exercised.add(f"{operation.method.upper()} {operation.path}")

    check()
