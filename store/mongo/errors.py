"""PyMongo errors -> the store's error tree (``store.base``), so callers never import pymongo."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from typing import Any, ParamSpec, TypeVar

from pymongo.errors import ConnectionFailure

from store.base import StoreUnavailable

P = ParamSpec("P")
T = TypeVar("T")


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Raise StoreUnavailable for anything that means "the server did not answer" (connection refused,
    server selection timed out, network timeout: all ``ConnectionFailure``)."""
    try:
        yield
    except ConnectionFailure as exc:
        raise StoreUnavailable(f"MongoDB: {exc}") from exc


def guarded(fn: Callable[P, Awaitable[T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Decorate a store coroutine so connection failures surface as StoreUnavailable."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with translated():
            return await fn(*args, **kwargs)

    return wrapper
