"""``ctiwire users list|set-tier|set-password|delete`` as an operator uses them."""

from __future__ import annotations

import subprocess

import pytest
from support import VENV_BIN, cli_env, ctiwire

pytestmark = pytest.mark.slow  # every test runs the CLI as processes


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(VENV_BIN / "ctiwire"), *args], env=env, input=stdin, capture_output=True, text=True,
                          timeout=120)


def test_set_password_list_and_delete(tmp_path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", "ana@corp.example", "--tier", "pro")
    short = run(env, "users", "set-password", "ana@corp.example", "--password-stdin", stdin="short\n")
    assert short.returncode == 1 and "at least 12 characters" in short.stderr and "Traceback" not in short.stderr
    done = run(env, "users", "set-password", "ana@corp.example", "--password-stdin", stdin="a long passphrase\n")
    assert done.returncode == 0 and "sessions have ended" in done.stdout
    assert "a long passphrase" not in done.stdout + done.stderr
    listing = ctiwire(env, "users", "list").splitlines()
    assert listing[0].split("\t") == ["email", "tier", "keys", "password", "created"]
    assert listing[1].split("\t")[:4] == ["ana@corp.example", "pro", "0", "set"]
    ctiwire(env, "keys", "create", "ana@corp.example", "--name", "siem")
    assert "deleted user ana@corp.example" in ctiwire(env, "users", "delete", "ana@corp.example")
    gone = run(env, "keys", "list", "ana@corp.example")
    assert gone.returncode == 1 and "no user" in gone.stderr
    assert len(ctiwire(env, "users", "list").splitlines()) == 1


def test_create_says_the_user_has_no_password_and_how_to_set_one(tmp_path) -> None:
    env = cli_env(tmp_path)
    said = ctiwire(env, "users", "create", "cy@corp.example")
    assert "no password yet" in said and "cannot sign in" in said
    assert "ctiwire users set-password cy@corp.example" in said and "Forgot your password?" in said


def test_downgrade_trims_scopes_and_respects_the_quota(tmp_path) -> None:
    env = cli_env(tmp_path)
    ctiwire(env, "users", "create", "bo@corp.example", "--tier", "pro")
    ctiwire(env, "keys", "create", "bo@corp.example", "--name", "wide")
    for n in range(3):
        ctiwire(env, "keys", "create", "bo@corp.example", "--name", f"k{n}", "--scopes", "read:iocs")
    refused = run(env, "users", "set-tier", "bo@corp.example", "free")
    assert refused.returncode == 1 and "holds 4 API keys" in refused.stderr and "allows 3" in refused.stderr
    ctiwire(env, "keys", "delete", "bo@corp.example", "k2")
    out = ctiwire(env, "users", "set-tier", "bo@corp.example", "free")
    assert "key 'wide': scopes now read:articles, read:iocs" in out and "free plan" in out
    assert "read:misp" not in ctiwire(env, "keys", "list", "bo@corp.example")
    assert ctiwire(env, "users", "list").splitlines()[1].split("\t")[1] == "free"
