"""Nonsense refused as a new user meets it: one line naming the setting, the value and what is allowed, exit 2,
no traceback; for a file or standard input the CLI cannot use, the same."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest
from support import VENV_BIN, cli_env, free_port

pytestmark = pytest.mark.slow  # every test runs the CLI as a process


def run(env: dict[str, str], *args: str, shell_suffix: str = "", **kwargs: object) -> subprocess.CompletedProcess[str]:
    command = [str(VENV_BIN / "ctiwire"), *args]
    if shell_suffix:  # e.g. "<&-": standard input closed, which subprocess cannot express
        command = ["sh", "-c", 'exec "$@" ' + shell_suffix, "sh", *command]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, **kwargs)  # type: ignore[call-overload]


def refused(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one line of a refusal (exit 2, no traceback), checked to hold ``words``."""
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    line = done.stderr.strip()
    assert line.startswith("ctiwire: error: ") and all(word in line for word in words), line
    return line


def test_a_port_beyond_65535_is_refused_and_nothing_listens(tmp_path: Path) -> None:
    port = free_port()  # 65536 more wraps round to it in the kernel's 16 bits
    done = run(cli_env(tmp_path, CTIWIRE_PORT=str(port + 65536)), "serve", "--no-seed")
    refused(done, "setting 'port' (CTIWIRE_PORT)", str(port + 65536), "allowed 1-65535")
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
    argument = run(cli_env(tmp_path), "serve", "--no-seed", "--port", "0")
    assert argument.returncode == 2 and "0 is not a port; allowed 1-65535" in argument.stderr


@pytest.mark.parametrize(("variable", "value", "words"), [
    ("CTIWIRE_PORT", "-1", ("setting 'port'", "-1 is not a port", "allowed 1-65535")),
    ("CTIWIRE_HOST", "999.1.1.1", ("setting 'host' (CTIWIRE_HOST)", "'999.1.1.1' is not a host", "IP address")),
    ("CTIWIRE_HOST", "bad_host!", ("setting 'host'", "'bad_host!' is not a host")),
    ("CTIWIRE_DATA_DIR", "/proc/nope", ("setting 'data_dir' (CTIWIRE_DATA_DIR)", "'/proc/nope'", "writable")),
    ("CTIWIRE_LOG_LEVEL", "LOUD", ("setting 'log_level' (CTIWIRE_LOG_LEVEL)", "'LOUD' is not a log level",
                                   "DEBUG, INFO, WARNING, ERROR, CRITICAL")),
    ("CTIWIRE_LOG_FORMAT", "xml", ("setting 'log_format' (CTIWIRE_LOG_FORMAT)", "'xml'", "text, json")),
    ("CTIWIRE_PUBLIC_URL", "not a url", ("setting 'public_url' (CTIWIRE_PUBLIC_URL)", "'not a url'", "http(s)://")),
    ("CTIWIRE_PUBLIC_URL", "ftp://cti.example", ("setting 'public_url'", "'ftp://cti.example'")),
])
def test_a_bad_setting_is_one_line_naming_it(tmp_path: Path, variable: str, value: str, words: tuple[str, ...]) -> None:
    refused(run(cli_env(tmp_path, **{variable: value}), "serve", "--no-seed"), *words)


def test_a_data_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    refused(run(cli_env(tmp_path / "file"), "users", "list"), "setting 'data_dir'", str(tmp_path / "file"))


@pytest.mark.parametrize(("text", "words"), [
    (None, ("cannot read the source list", "No such file")),
    ("sources: [", ("not valid YAML",)),
    ("sources:\n  - name: Feed\n    homepage: https://feed.example\n    feed_url: not-a-url\n",
     ("source #1 ('Feed')", "feed_url must be an http(s) URL")),
])
def test_a_bad_sources_file_stops_serve_before_it_listens(tmp_path: Path, text: str | None,
                                                           words: tuple[str, ...]) -> None:
    sources = tmp_path / "sources.yaml"
    if text is not None:
        sources.write_text(text)
    port = free_port()
    done = run(cli_env(tmp_path / "data", CTIWIRE_SOURCES_FILE=str(sources)), "serve", "--no-seed",
               "--port", str(port))
    refused(done, "setting 'sources_file' (CTIWIRE_SOURCES_FILE)", str(sources), *words)
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_an_unknown_variable_is_one_warning_with_the_closest_name(tmp_path: Path) -> None:
    done = run(cli_env(tmp_path, CTIWIRE_PORTT="8001", CTIWIRE_QWERTY="1"), "users", "list")
    assert done.returncode == 0, done
    assert done.stderr.splitlines() == ["warning: unknown setting CTIWIRE_PORTT (did you mean CTIWIRE_PORT?)",
                                        "warning: unknown setting CTIWIRE_QWERTY"]


def test_variables_read_elsewhere_on_purpose_are_not_warned_about(tmp_path: Path) -> None:
    extra = {"CTIWIRE_TEST_MONGODB_URI": "mongodb://127.0.0.1:1", "CTIWIRE_FUZZ_EXAMPLES": "5",
             "CTIWIRE_MODEL_DIR": str(tmp_path / "model"), "CTIWIRE_SCREENSHOTS": str(tmp_path)}
    done = run(cli_env(tmp_path, **extra), "users", "list")
    assert done.returncode == 0 and done.stderr == "", done


@pytest.mark.parametrize("closed", ["<&-", "</dev/null"])
@pytest.mark.parametrize("flags", [("--password-stdin",), ()])
def test_set_password_without_standard_input_is_one_line(tmp_path: Path, closed: str, flags: tuple[str, ...]) -> None:
    env = cli_env(tmp_path)
    assert run(env, "users", "create", "ana@corp.example").returncode == 0
    done = run(env, "users", "set-password", "ana@corp.example", *flags, shell_suffix=closed,
               start_new_session=True)  # no controlling terminal for getpass to fall back on
    refused(done, "no password", "standard input")


def test_an_export_to_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    done = run(cli_env(tmp_path), "export", "stix", "-o", "/nonexistent/x.json")
    refused(done, "cannot write /nonexistent/x.json", "No such file or directory")
    assert not Path("/nonexistent").exists()
