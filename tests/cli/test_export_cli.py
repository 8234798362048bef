"""``ctiwire export`` writes the network formats, filtered by type, as the API serves them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import format_tools
from support import VENV_BIN, cli_env, ctiwire


def test_export_a_blocklist_of_one_type_and_a_zone(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "data")
    ctiwire(env, "seed", "--articles", "60")
    blocklist, zone = tmp_path / "ips.txt", tmp_path / "ctiwire.rpz"
    # The demo's addresses sit in documentation ranges, which a warninglist names.
    ctiwire(env, "export", "blocklist", "--type", "ipv4,ipv6", "--limit", "500", "--include-warninglisted",
            "-o", str(blocklist))
    ctiwire(env, "export", "rpz", "-o", str(zone))
    sections = format_tools.blocklist(blocklist.read_bytes())
    assert set(sections) <= {"ipv4", "ipv6"} and sections.get("ipv4")
    assert b"# filters: type=ipv4,ipv6, limit=500\n" in blocklist.read_bytes()
    assert any(rtype == "CNAME" for _, rtype, _ in format_tools.rpz(zone.read_bytes()))


def test_an_unknown_type_is_refused_by_name(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(VENV_BIN / "ctiwire"), "export", "blocklist", "--type", "ipv4,ipv5", "-o", "-"],
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "unknown IOC type(s) ipv5" in done.stderr
