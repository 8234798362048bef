"""Schemathesis hooks shared by tests/server/test_openapi_fuzz.py and the CLI run in BENCHMARKS.md
(``SCHEMATHESIS_HOOKS=tests/schemathesis_hooks.py st run ...``).

- A Sigma export is a multi-document YAML stream (RFC 9512 allows several documents in application/yaml);
  schemathesis' own YAML reader takes one document and raises on the second, which kills its worker
  thread and leaves the operations queued behind it untested. This reader returns the list of documents.
- The live stream (GET /api/v1/stream) stays open until the client leaves: each generated request asks it
  to close after a second (its ``duration``), so the run goes on to the next case.
- TAXII 2.1 requests carry the TAXII media type in Accept (TAXII 2.1 section 1.6.8.1); without it every
  TAXII answer is the documented 406 and nothing behind the negotiation would be exercised.
"""

from __future__ import annotations

from typing import Any

import schemathesis
import yaml
from schemathesis.core import media_types

TAXII_ACCEPT = "application/taxii+json;version=2.1"


@schemathesis.deserializer(*media_types.YAML_MEDIA_TYPES)
def yaml_stream(_ctx: Any, response: Any) -> list[Any]:
    return list(yaml.safe_load_all(response.content.decode(response.encoding or "utf-8")))


@schemathesis.hook
def before_call(_ctx: Any, case: Any, **_kwargs: Any) -> None:
    if case.operation.path.startswith("/api/taxii2"):
        case.headers = {**(case.headers or {}), "Accept": TAXII_ACCEPT}
    if case.operation.path == "/api/v1/stream":
        case.query = {**(case.query or {}), "duration": 1}
