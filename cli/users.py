"""``ctiwire users create|list|set-tier|set-password|delete``: accounts from the shell.

Passwords are read from a prompt (not echoed) or from standard input with ``--password-stdin``, never
from the command line, where they would sit in the shell history and the process list.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from cli.commands import CommandError, FileError, opened_store
from config.settings import Settings
from config.tiers import TIERS
from store import accounts
from store.base import Conflict, NotFound
from store.ports import AccountStore


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("users", help="manage users (accounts of the account web)")
    actions = parser.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="create a user")
    create.add_argument("email")
    create.add_argument("--tier", choices=tuple(TIERS), default="free")
    actions.add_parser("list", help="list users: e-mail, tier, keys, whether a password is set")
    tier = actions.add_parser("set-tier", help="move a user to a tier (a downgrade trims key scopes)")
    tier.add_argument("email")
    tier.add_argument("tier", choices=tuple(TIERS))
    password = actions.add_parser("set-password", help="set a password (prompted); ends the user's sessions")
    password.add_argument("email")
    password.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    delete = actions.add_parser("delete", help="delete a user with its keys and sessions")
    delete.add_argument("email")


async def users(settings: Settings, args: argparse.Namespace) -> int:
    async with opened_store(settings) as stores:
        try:
            await ACTIONS[args.action](stores.accounts, args)
        except (NotFound, Conflict, accounts.AccountError) as exc:
            raise CommandError(str(exc)) from exc
    return 0


async def _create(store: AccountStore, args: argparse.Namespace) -> None:
    user = await accounts.create_user(store, args.email, args.tier)
    print(f"created user {user.email} ({user.tier}). It has no password yet, so it cannot sign in to the "
          f"account web: set one with `ctiwire users set-password {user.email}`, or let the user choose one "
          "through \"Forgot your password?\" on the sign-in page (a link by e-mail).")


async def _list(store: AccountStore, args: argparse.Namespace) -> None:
    print("email\ttier\tkeys\tpassword\tcreated")
    for user in await store.list_users():
        keys = len(await store.list_keys(user.id))
        print(f"{user.email}\t{user.tier}\t{keys}\t{'set' if user.password_hash else 'none'}\t"
              f"{user.created_at.isoformat()}")


async def _set_tier(store: AccountStore, args: argparse.Namespace) -> None:
    for line in await accounts.set_tier(store, args.email, args.tier):
        print(line)
    print(f"{args.email.lower()} is now on the {args.tier} plan")


def _read_password(from_stdin: bool) -> str:
    """A line of standard input, or the prompt on a terminal; a closed or empty input is one line, exit 2."""
    if sys.stdin is None:  # closed (<&-)
        raise FileError("no password: standard input is closed; nothing changed")
    if not from_stdin and not sys.stdin.isatty():  # getpass would fall back to an echoing read, with warnings
        raise FileError("no password: standard input is not a terminal to prompt on; use --password-stdin")
    if from_stdin:
        line = sys.stdin.readline()
        if not line:
            raise FileError("no password: standard input is empty; nothing changed")
        return line.rstrip("\r\n")
    first = getpass.getpass("new password: ")
    if getpass.getpass("again: ") != first:
        raise CommandError("the two passwords differ; nothing changed")
    return first


async def _set_password(store: AccountStore, args: argparse.Namespace) -> None:
    await accounts.set_password(store, args.email, _read_password(args.password_stdin))
    print(f"password of {args.email.lower()} changed; its sessions have ended")


async def _delete(store: AccountStore, args: argparse.Namespace) -> None:
    user = await store.get_user(email=args.email)
    await store.delete_user(user.id)
    print(f"deleted user {user.email} with its keys (they stop working at once) and sessions")


ACTIONS = {"create": _create, "list": _list, "set-tier": _set_tier, "set-password": _set_password,
           "delete": _delete}
