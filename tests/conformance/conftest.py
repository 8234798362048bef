"""One behavioural suite per concern, every backend: the fixtures are parametrised over the backends.

``sqlite`` (the embedded default) and ``mongomock`` (MongoStore over mongomock-ng) always run;
``mongodb`` runs too when ``CTIWIRE_TEST_MONGODB_URI`` names a real server. Each concern's tests take
that concern's fixture (``articles``, ``iocs``, ``sources``, ``accounts``), so they reach only its
methods; ``stores`` is the whole bundle, for the few tests about how concerns meet (the data version,
re-enrichment). Record factories live in ``factories.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mongo_support import backend_stores, dispose_stores, server_backends

from store.ports import AccountStore, ArticleStore, IocStore, SourceStore, Stores
from store.sqlite import sqlite_stores


@pytest.fixture(params=server_backends())
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def stores(backend: str, tmp_path: Path) -> AsyncIterator[Stores]:
    opened = backend_stores(backend) or sqlite_stores(tmp_path / "ctiwire.db")
    await opened.open()
    yield opened
    await dispose_stores(opened)


@pytest.fixture
def articles(stores: Stores) -> ArticleStore:
    return stores.articles


@pytest.fixture
def iocs(stores: Stores) -> IocStore:
    return stores.iocs


@pytest.fixture
def sources(stores: Stores) -> SourceStore:
    return stores.sources


@pytest.fixture
def accounts(stores: Stores) -> AccountStore:
    return stores.accounts
