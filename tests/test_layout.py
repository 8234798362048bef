"""The rooms stay where ARCHITECTURE.md puts them: no room is imported by a string.

import-linter (pyproject.toml) checks the static imports; an import by a string slips past it, as
``taxii`` once did from ``server``. This test makes sure none comes back.
"""

from __future__ import annotations

import ast
from pathlib import Path

from application.app import ROUTE_MODULES

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "store", "ingest", "exporters", "webhooks", "server", "taxii", "workers", "application", "cli")


def _string_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("importlib.import_module", "import_module", "__import__"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def test_no_room_is_imported_by_a_string() -> None:
    files = [path for package in PACKAGES for path in (REPO / package).rglob("*.py")]
    assert len(files) > 50  # the walk found the product's modules
    assert [hit for path in files for hit in _string_imports(path)] == []


def test_the_assembly_mounts_server_and_taxii() -> None:
    names = {module.__name__ for module in ROUTE_MODULES}
    assert "taxii.routes" in names and "server.articles" in names
