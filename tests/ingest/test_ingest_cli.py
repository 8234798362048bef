"""``ctiwire ingest --once`` and ``ctiwire enrich`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from support import VENV_BIN, cli_env, ctiwire

pytestmark = pytest.mark.slow  # the CLI as processes

SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
TEXT = ("Loader campaign hits logistics firms\n"
        "The operators delivered a loader through malicious invoices. The loader beaconed to its "
        "command-and-control server at hxxps://invoice-sync[.]top/gate.php and dropped a payload "
        f"with SHA256 {SHA}. The campaign exploited CVE-2024-3400 for initial access.\n")


def test_enrich_prints_the_documented_shape(tmp_path: Path) -> None:
    path = tmp_path / "loader.txt"
    path.write_text(TEXT)
    result = json.loads(ctiwire(cli_env(tmp_path), "enrich", str(path), "--format", "json"))
    found = result["loader"]
    assert set(found) == {"iocs", "cves", "attack_techniques", "threat_actors", "category", "severity_label",
                          "severity_score"}
    assert set(found["iocs"]) == {"ipv4", "ipv6", "domain", "url", "md5", "sha1", "sha256", "sha512", "email"}
    assert found["iocs"]["sha256"] == [SHA] and "https://invoice-sync.top/gate.php" in found["iocs"]["url"]
    assert found["cves"] == ["CVE-2024-3400"]


def test_enrich_explain_adds_the_reasons_of_severity_and_techniques(tmp_path: Path) -> None:
    path = tmp_path / "loader.txt"
    path.write_text(TEXT + "\nThe implant captures the desktop every thirty seconds and uploads the screenshot.\n")
    found = json.loads(ctiwire(cli_env(tmp_path), "enrich", str(path), "--explain"))["loader"]
    assert found["severity_reasons"] and found["severity_reasons"][0].startswith("rubric level: ")
    evidence = dict(line.split(": ", 1) for line in found["attack_evidence"])
    assert set(evidence) == set(found["attack_techniques"])
    assert evidence["T1113"].startswith("classifier ") and "screenshot" in evidence["T1113"]


def test_ingest_once_fills_the_database(httpserver: HTTPServer, tmp_path: Path) -> None:
    base = httpserver.url_for("").rstrip("/")
    title, body = TEXT.split("\n", 1)
    httpserver.expect_request("/p/1").respond_with_data(
        f"<html><body><article><h1>{title}</h1><p>{body}</p></article></body></html>", content_type="text/html")
    httpserver.expect_request("/feed").respond_with_data(
        f"<rss version='2.0'><channel><title>F</title><link>{base}</link><description>d</description><item>"
        f"<title>{title}</title><link>{base}/p/1</link><description>d</description></item></channel></rss>",
        content_type="application/rss+xml")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n- {{name: Local, homepage: '{base}/', feed_url: '{base}/feed', source_tier: 1}}\n")
    env = cli_env(tmp_path / "data", CTIWIRE_SOURCES_FILE=str(sources))
    ctiwire(env, "ingest", "--once")
    ctiwire(env, "ingest", "--once", "--source", "Local")
    exported = tmp_path / "out.json"
    # SHA is the empty file's digest, which a warninglist names: the default export leaves it out.
    ctiwire(env, "export", "stix", "--include-warninglisted", "-o", str(exported))
    bundle = json.loads(exported.read_text())
    assert any(SHA in obj.get("pattern", "") for obj in bundle["objects"])


def test_an_unknown_source_is_named_before_any_progress_bar(tmp_path: Path) -> None:
    import subprocess

    from support import VENV_BIN

    done = subprocess.run([str(VENV_BIN / "ctiwire"), "ingest", "--once", "--source", "No Such Feed"],
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "unknown source 'No Such Feed'" in done.stderr
    assert "collecting sources" not in done.stderr and "Traceback" not in done.stderr


def test_enrich_prints_a_result_for_every_file(tmp_path: Path) -> None:
    """Text that used to raise (a half-bracket defang, versions and a placeholder shaped like addresses)
    gets its result; an unreadable file gets an ``error`` and makes the exit status 1, after the others."""
    ok, bad = tmp_path / "ok.txt", tmp_path / "bad.txt"
    ok.write_text(TEXT)
    bad.write_text("Trojanized installer\nThe loader came from http://evil-cdn.]com/a.exe and targets Adobe Flash "
                   "Player 18.0.0.324 and 3CXDesktopApp 18.12.407.0; it also contacted 000.000.000.000.\n")
    done = subprocess.run([str(VENV_BIN / "ctiwire"), "enrich", str(ok), str(bad), str(tmp_path / "missing.txt")],
                          env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["ok"]["iocs"]["sha256"] == [SHA] and "error" not in result["ok"]
    assert result["bad"]["iocs"]["url"] == ["http://evil-cdn.com/a.exe"] and result["bad"]["iocs"]["ipv4"] == []
    assert "error" not in result["bad"]
    assert result["missing"] == {"error": f"{tmp_path / 'missing.txt'}: No such file or directory"}


def test_enrich_files_of_one_name_each_get_their_result(tmp_path: Path) -> None:
    """``a/report.txt b/report.txt report.html``: a result per file, those sharing a name keyed by their path."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second, page = tmp_path / "a" / "report.txt", tmp_path / "b" / "report.txt", tmp_path / "report.html"
    first.write_text(TEXT)
    second.write_text("Quiet week\nNothing malicious was reported this week.\n")
    page.write_text("<html><body><p>The stealer beacons to its C2 server at hxxp://drop-zone[.]top/g.php</p></body>"
                    "</html>")
    (tmp_path / "single.txt").write_text(TEXT)
    result = json.loads(ctiwire(cli_env(tmp_path), "enrich", str(first), str(second), str(page),
                                str(tmp_path / "single.txt")))
    assert set(result) == {str(first), str(second), str(page), "single"}
    assert result[str(first)]["iocs"]["sha256"] == [SHA] and result[str(second)]["iocs"]["sha256"] == []
    assert result[str(page)]["iocs"]["url"] == ["http://drop-zone.top/g.php"]


def test_enrich_writes_utf8_json_whatever_the_locale(tmp_path: Path) -> None:
    """JSON between systems is UTF-8 (RFC 8259 section 8.1): a terminal or pipe declared ASCII got a traceback
    and no result for any file."""
    path = tmp_path / "cafe.txt"
    path.write_text("Caf\u00e9 chain breach \u2014 report\nThe caf\u00e9 chain\u2019s C2 server was "
                    "hxxp://cafe-c2[.]top/men\u00fc.php.\n", encoding="utf-8")
    done = subprocess.run([str(VENV_BIN / "ctiwire"), "enrich", str(path)], capture_output=True, timeout=120,
                          env=cli_env(tmp_path, PYTHONIOENCODING="ascii"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.decode("utf-8"))["cafe"]["iocs"]["url"] == ["http://cafe-c2.top/men\u00fc.php"]
