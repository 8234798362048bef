"""Schemathesis against the running service: every documented operation, generated requests, and the
responses checked against the OpenAPI description (no 5xx, documented statuses, content types, schemas)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from support import ServerProcess, cli_env, spawn_server

pytestmark = pytest.mark.slow  # schemathesis over every operation

# Parameters carry rules a JSON schema does not state (a STIX type name, a CVE that must exist in a
# pattern, `severity` with `min_severity`): a 400 for such schema-valid input is by design, and
# documented in each parameter's description. Every other check runs.
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


@pytest.mark.parametrize("tier", ["pro", "free"])
def test_every_operation_honours_its_description(api_schema: Any, live: tuple[ServerProcess, dict[str, str]],
                                                 tier: str) -> None:
    server, keys = live
    key = keys[tier]
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 15
    for operation in operations:
        headers = {"Authorization": f"Bearer {key}"}
        # A Sigma export is a multi-document YAML stream (RFC 9512 allows several documents in application/yaml),
        # which schemathesis reads with a one-document loader and fails on (its CLI thread crashes); its
        # content is validated by pySigma in tests/exporters. Its status, headers and media type still are here.
        excluded = EXCLUDED + ([checks.response_schema_conformance] if operation.path.endswith("/sigma") else [])
        if operation.path.startswith("/api/taxii2"):  # TAXII 2.1 content negotiation (its section 1.6.8)
            headers["Accept"] = "application/taxii+json;version=2.1"

        _fuzz(operation, server.url, headers, excluded)


def _fuzz(operation: Any, base_url: str, headers: dict[str, str], excluded: list[Any]) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def check(case: Any) -> None:
        case.call_and_validate(base_url=base_url, headers=headers, excluded_checks=excluded)

    check()
