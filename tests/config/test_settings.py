"""Typed settings (issue 13): every value arrives as its field's type, a bad value or an unknown type is refused."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from config.settings import Settings, SettingsError, field_types, load_settings


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
