"""The store seam by concern (ARCHITECTURE.md): each backend answers each concern with its own object, which
implements all of that concern's interface and nothing of another's, and no interface grows past a size
one suite can cover."""

from __future__ import annotations

import abc
import inspect

from store.ports import (
    AccountStore,
    ArticleStore,
    AttemptStore,
    ContextStore,
    FeedStore,
    IocStore,
    KeyStore,
    Lifecycle,
    SessionStore,
    SightingStore,
    SourceStore,
    Stores,
    TokenStore,
    UserStore,
    Versioned,
)
from store.usage import UsageHistory

CONCERNS: dict[str, type[abc.ABC]] = {"articles": ArticleStore, "iocs": IocStore, "sources": SourceStore,
                                      "accounts": AccountStore, "feeds": FeedStore, "sightings": SightingStore,
                                      "context": ContextStore}
# The interfaces callers name; AccountStore is UserStore + KeyStore + SessionStore + TokenStore + AttemptStore
# + UsageHistory.
INTERFACES = (Lifecycle, ArticleStore, IocStore, SourceStore, FeedStore, UserStore, KeyStore, SessionStore, TokenStore,
              AttemptStore, UsageHistory, SightingStore, ContextStore)
MOST_OPERATIONS = 15


def operations(interface: type) -> set[str]:
    """The public methods ``interface`` declares or inherits from other interfaces."""
    return {name for name, value in inspect.getmembers(interface, inspect.isfunction) if not name.startswith("_")}


def test_no_interface_passes_fifteen_operations() -> None:
    sizes = {interface.__name__: len(operations(interface)) for interface in INTERFACES}
    assert all(0 < n <= MOST_OPERATIONS for n in sizes.values()), sizes


def test_each_operation_belongs_to_one_concern() -> None:
    shared = operations(Versioned)  # the data version: every page cache keys on it, whichever rows it holds
    owners: dict[str, list[str]] = {}
    for name, interface in CONCERNS.items():
        for op in operations(interface) - shared:
            owners.setdefault(op, []).append(name)
    assert {op: names for op, names in owners.items() if len(names) > 1} == {}
    assert not operations(Lifecycle) & set(owners)


async def test_each_backend_gives_each_concern_its_own_object(stores: Stores) -> None:
    parts = {name: getattr(stores, name) for name in CONCERNS}
    assert isinstance(stores.lifecycle, Lifecycle) and not stores.lifecycle.__abstractmethods__
    assert len({id(part) for part in parts.values()} | {id(stores.lifecycle)}) == len(parts) + 1
    shared = operations(Versioned)
    for name, part in parts.items():
        interface = CONCERNS[name]
        # Built, so every abstract method is implemented (an ABC with one missing refuses to instantiate).
        assert isinstance(part, interface) and not type(part).__abstractmethods__, name
        foreign = set().union(*(operations(other) for other in CONCERNS.values())) - operations(interface) - shared
        assert sorted(op for op in foreign | operations(Lifecycle) if hasattr(part, op)) == [], name
