"""``ctiwire keys create|list|delete|deactivate|activate|rotate|rename|scopes``: API keys from the shell.

A secret (a new key's, or a rotated key's new one) is printed once and only then delivered: a command
killed before it printed leaves the key pending, so no working secret exists that nobody holds.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta

from cli.commands import CommandError, opened_store
from config.settings import Settings
from store import accounts
from store.base import Conflict, NotFound, QuotaExceeded
from store.ports import AccountStore
from store.records import ApiKey, utcnow


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = sub.add_parser("keys", help="manage API keys").add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a key; the secret is printed once")
    create.add_argument("email")
    create.add_argument("--name", required=True)
    create.add_argument("--scopes", nargs="*", default=None, help="scopes (default: every scope of the tier)")
    create.add_argument("--expires-in-days", type=int, default=None)
    actions.add_parser("list", help="list keys with their last use (never their secrets)").add_argument("email")
    for action, text in (("delete", "delete a key at once"), ("deactivate", "deactivate a key"),
                         ("activate", "reactivate a deactivated key"),
                         ("rotate", "give a key a new secret, printed once; the old one works for --grace"),
                         ("rename", "rename a key"), ("scopes", "replace a key's scopes (within the tier's)")):
        one = actions.add_parser(action, help=text)
        one.add_argument("email")
        one.add_argument("name")
    actions.choices["rotate"].add_argument("--grace", choices=tuple(accounts.GRACES), default="none",
                                           help="how long the old secret keeps working (default: none)")
    actions.choices["rename"].add_argument("new_name")
    actions.choices["scopes"].add_argument("scopes", nargs="+")


async def keys(settings: Settings, args: argparse.Namespace) -> int:
    async with opened_store(settings) as stores:
        try:
            await ACTIONS.get(args.action, _one_key)(stores.accounts, args)
        except (NotFound, Conflict, QuotaExceeded, accounts.AccountError) as exc:
            raise CommandError(str(exc)) from exc
    return 0


async def _create(store: AccountStore, args: argparse.Namespace) -> None:
    if args.expires_in_days is not None and args.expires_in_days < 1:  # 0 meant "never", -1 "already"
        raise CommandError("--expires-in-days must be 1 or more (leave it out for a key that never expires)")
    expires = utcnow() + timedelta(days=args.expires_in_days) if args.expires_in_days else None
    new = await accounts.create_key(store, args.email, args.name, args.scopes, expires)
    print(f"created key {new.record.name!r} with scopes {', '.join(new.record.scopes)}")
    await _deliver(store, new)


async def _rotate(store: AccountStore, args: argparse.Namespace) -> None:
    new = await accounts.rotate_key(store, args.email, args.name, args.grace)
    ends = new.record.previous_expires_at
    print(f"rotated key {args.name!r}; the old secret "
          + (f"works until {_moment(ends)}" if args.grace != "none" and ends else "no longer works"))
    await _deliver(store, new)


async def _deliver(store: AccountStore, new: accounts.NewKey) -> None:
    print("the secret is shown once; store it now:")
    print(new.secret, flush=True)
    await accounts.deliver_key(store, new)  # only once the secret is out: a kill before leaves it pending


async def _list(store: AccountStore, args: argparse.Namespace) -> None:
    user, now = await store.get_user(email=args.email), utcnow()
    print("name\tprefix\tstate\tscopes\tcreated\texpires\tlast used")
    for key in await store.list_keys(user.id):
        print(f"{key.name}\t{key.prefix}\t{accounts.key_state(key, now)}\t{' '.join(key.scopes)}\t"
              f"{key.created_at.isoformat()}\t{_expiry(key, now)}\t{_moment(key.last_used_at)}")


def _expiry(key: ApiKey, now: datetime) -> str:
    soon = " (expires within 7 days)" if accounts.expires_soon(key, now) else ""
    return _moment(key.expires_at) + soon


def _moment(at: datetime | None) -> str:
    return at.isoformat() if at is not None else "never"


async def _rename(store: AccountStore, args: argparse.Namespace) -> None:
    saved = await accounts.rename_key(store, args.email, args.name, args.new_name)
    print(f"key {args.name!r} is now named {saved!r}; its secret is unchanged")


async def _scopes(store: AccountStore, args: argparse.Namespace) -> None:
    kept = await accounts.set_scopes(store, args.email, args.name, args.scopes)
    print(f"key {args.name!r} now has scopes {', '.join(kept)}")


async def _one_key(store: AccountStore, args: argparse.Namespace) -> None:
    """``delete``, ``deactivate`` or ``activate``."""
    user = await store.get_user(email=args.email)
    if args.action == "delete":
        await store.delete_key(user.id, args.name)
        print(f"deleted key {args.name!r}; it stops working at once")
        return
    await store.set_key_active(user.id, args.name, args.action == "activate")
    print(f"key {args.name!r} is now {'active' if args.action == 'activate' else 'deactivated'}")


ACTIONS = {"create": _create, "list": _list, "rotate": _rotate, "rename": _rename, "scopes": _scopes}
