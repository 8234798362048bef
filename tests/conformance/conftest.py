"""One behavioural suite, every backend: the ``store`` fixture is parametrised over the backends.

``sqlite`` (the embedded default) and ``mongomock`` (MongoStore over mongomock-ng) always run;
``mongodb`` runs too when ``CTIWIRE_TEST_MONGODB_URI`` names a real server. Record factories live
in ``factories.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mongo_support import backend_store, dispose, server_backends

from store.base import Store
from store.mongo import MongoStore
from store.sqlite import SqliteStore


@pytest.fixture(params=server_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(backend: str, tmp_path: Path) -> AsyncIterator[Store]:
    opened: Store = backend_store(backend) or SqliteStore(tmp_path / "ctiwire.db")
    await opened.open()
    yield opened
    if isinstance(opened, MongoStore):
        await dispose(opened)
    else:
        await opened.close()
