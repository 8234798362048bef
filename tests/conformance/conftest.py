"""One behavioural suite, every backend: the ``store`` fixture is parametrised over the backends.

``sqlite`` (the embedded default) and ``mongomock`` (MongoStore over mongomock-ng) always run;
``mongodb`` runs too when ``CTIWIRE_TEST_MONGODB_URI`` names a real server. Record factories live
in ``factories.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mongo_support import dispose, mock_store, real_mongodb_uri, real_store

from store.base import Store
from store.mongo import MongoStore
from store.sqlite import SqliteStore

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("mongomock", id="mongomock", marks=pytest.mark.mongo),
    *([pytest.param("mongodb", id="mongodb", marks=pytest.mark.mongo)] if real_mongodb_uri() else []),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened: Store
    if backend == "sqlite":
        opened = SqliteStore(tmp_path / "ctiwire.db")
    elif backend == "mongomock":
        opened = mock_store()
    else:
        opened = real_store(real_mongodb_uri() or "")
    await opened.open()
    yield opened
    if isinstance(opened, MongoStore):
        await dispose(opened)
    else:
        await opened.close()
