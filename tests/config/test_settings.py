"""Typed settings: every value arrives as its field's type, a bad value or an unknown type is refused."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from config.settings import Settings, SettingsError, field_types, load_settings, unknown_variables


def test_values_arrive_as_their_types(tmp_path: Path) -> None:
    config = tmp_path / "ctiwire.yaml"
    config.write_text("port: 9001\ncookie_secure: true\nsources_file: ''\nsession_idle_minutes: '30'\n")
    settings = load_settings({"CTIWIRE_CONFIG": str(config), "CTIWIRE_DATA_DIR": str(tmp_path),
                              "CTIWIRE_INGEST": "on", "CTIWIRE_PUBLIC_URL": "https://cti.example",
                              "CTIWIRE_PORT": "9002"})
    assert settings.port == 9002 and settings.ingest is True and settings.cookie_secure is True
    assert settings.session_idle_minutes == 30 and settings.sources_file is None
    assert settings.data_dir == tmp_path and settings.public_url == "https://cti.example"


@pytest.mark.parametrize(("name", "raw"), [("port", "eighty"), ("ingest", "maybe"), ("processes", "1.5")])
def test_a_bad_value_names_its_setting(tmp_path: Path, name: str, raw: str) -> None:
    with pytest.raises(SettingsError, match=name):
        load_settings({f"CTIWIRE_{name.upper()}": raw, "CTIWIRE_DATA_DIR": str(tmp_path)})


def test_unknown_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="unknown setting 'colour'"):
        load_settings({"CTIWIRE_CONFIG": str(_yaml(tmp_path, "colour: blue\n")), "CTIWIRE_DATA_DIR": str(tmp_path)})


def test_a_float_field_is_a_float_and_an_unsupported_type_is_refused() -> None:
    @dataclass
    class WithFloat:
        ratio: float = 0.5
        limit: int | None = None

    assert field_types(WithFloat) == {"ratio": (float, False), "limit": (int, True)}

    @dataclass
    class WithList:
        names: list[str]

    with pytest.raises(SettingsError, match="'names'.*no converter"):
        field_types(WithList)
    assert set(field_types(Settings)) == {f for f in Settings.__dataclass_fields__}  # every real field converts


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("name", "raw", "allowed"), [
    ("port", "0", "allowed 1-65535"), ("port", "65536", "allowed 1-65535"),
    ("host", "999.1.1.1", "IP address"), ("host", "-lead.example", "host name"), ("host", "", "host name"),
    ("log_level", "LOUD", "DEBUG, INFO, WARNING, ERROR, CRITICAL"), ("log_format", "xml", "text, json"),
    ("public_url", "not a url", "http(s)://"), ("public_url", "https://", "http(s)://"),
    ("smtp_url", "mail.example:25", "smtp://"), ("smtp_url", "http://mail.example", "smtps://"),
])
def test_a_value_out_of_range_names_setting_value_and_what_is_allowed(tmp_path: Path, name: str, raw: str,
                                                                      allowed: str) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings({f"CTIWIRE_{name.upper()}": raw, "CTIWIRE_DATA_DIR": str(tmp_path)})
    message = str(refused.value)
    assert message.startswith(f"setting {name!r} (CTIWIRE_{name.upper()}): ")
    assert raw in message and allowed in message and "\n" not in message


@pytest.mark.parametrize(("name", "raw", "kept"), [
    ("port", "1", 1), ("port", "65535", 65535), ("host", "0.0.0.0", "0.0.0.0"), ("host", "::", "::"),
    ("host", "localhost", "localhost"), ("host", "cti-1.corp.example", "cti-1.corp.example"),
    ("log_level", "debug", "DEBUG"), ("log_format", "JSON", "json"),
    ("public_url", "http://10.0.0.5:8000/cti", "http://10.0.0.5:8000/cti"),
    ("smtp_url", "smtps://u:p@mail.example:465", "smtps://u:p@mail.example:465"), ("signup", "verify", "verify"),
])
def test_good_values_are_kept_and_names_normalised(tmp_path: Path, name: str, raw: str, kept: object) -> None:
    settings = load_settings({f"CTIWIRE_{name.upper()}": raw, "CTIWIRE_DATA_DIR": str(tmp_path)})
    assert getattr(settings, name) == kept


def test_a_refused_smtp_url_never_shows_its_password(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as refused:
        load_settings({"CTIWIRE_SMTP_URL": "imap://mailer:hunter2-secret@mail.example",
                       "CTIWIRE_DATA_DIR": str(tmp_path)})
    assert "hunter2-secret" not in str(refused.value) and "imap://mailer:***@mail.example" in str(refused.value)


def test_the_data_dir_is_created_and_must_be_a_writable_directory(tmp_path: Path) -> None:
    assert load_settings({"CTIWIRE_DATA_DIR": str(tmp_path / "a" / "b")}).data_dir.is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(SettingsError, match=r"setting 'data_dir' \(CTIWIRE_DATA_DIR\): '.*file' is not a writable"):
        load_settings({"CTIWIRE_DATA_DIR": str(tmp_path / "file")})


def test_the_sources_file_is_read_and_checked_with_the_settings(tmp_path: Path) -> None:
    sources = tmp_path / "sources.yaml"
    sources.write_text("sources:\n  - name: A\n    homepage: https://a.example\n    feed_url: https://a.example/f\n"
                       "    source_tier: 7\n")
    with pytest.raises(SettingsError, match=r"'sources_file' \(CTIWIRE_SOURCES_FILE\): .*sources.yaml: "
                                            r"source #1 \('A'\): source_tier must be one of 1, 2, 3, 4, got 7"):
        load_settings({"CTIWIRE_SOURCES_FILE": str(sources), "CTIWIRE_DATA_DIR": str(tmp_path)})
    sources.write_text(sources.read_text().replace("7", "1"))
    assert load_settings({"CTIWIRE_SOURCES_FILE": str(sources), "CTIWIRE_DATA_DIR": str(tmp_path)}).sources_file


def test_a_malformed_settings_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"c.yaml: not valid YAML: .* at line 3, column 1$"):
        load_settings({"CTIWIRE_CONFIG": str(_yaml(tmp_path, "port: 1\nhost: [\n")), "CTIWIRE_DATA_DIR": str(tmp_path)})


def test_unknown_variables_are_named_with_the_closest_setting() -> None:
    env = {"CTIWIRE_PORTT": "1", "CTIWIRE_LOGLEVEL": "x", "CTIWIRE_PORT": "1", "CTIWIRE_CONFIG": "c.yaml",
           "CTIWIRE_TEST_MONGODB_URI": "mongodb://x", "CTIWIRE_ZZZZZZ": "1", "PORT": "1"}
    assert unknown_variables(env) == ["warning: unknown setting CTIWIRE_LOGLEVEL (did you mean CTIWIRE_LOG_LEVEL?)",
                                      "warning: unknown setting CTIWIRE_PORTT (did you mean CTIWIRE_PORT?)",
                                      "warning: unknown setting CTIWIRE_ZZZZZZ"]
