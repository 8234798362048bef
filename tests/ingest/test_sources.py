"""The source list: the shipped file is valid; a bad entry is refused at load, naming the entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from config.settings import SettingsError, load_settings
from config.sources import SourceConfigError, load_sources, parse_sources


def test_the_shipped_list_has_thirty_distinct_valid_sources(tmp_path: Path) -> None:
    sources = load_sources(load_settings({"CTIWIRE_DATA_DIR": str(tmp_path)}))
    assert len(sources) >= 30
    assert len({s.name for s in sources}) == len(sources)
    assert {s.source_tier for s in sources} == {1, 2, 3, 4}
    assert {s.category for s in sources} == {"government", "commercial", "community"}


def test_a_file_from_the_environment_replaces_the_shipped_list(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("sources:\n- {name: Mine, homepage: 'https://a.example', feed_url: 'https://a.example/f'}\n")
    sources = load_sources(load_settings({"CTIWIRE_SOURCES_FILE": str(path), "CTIWIRE_DATA_DIR": str(tmp_path)}))
    assert [(s.name, s.source_type, s.source_tier, s.enabled) for s in sources] == [("Mine", "rss", 2, True)]


@pytest.mark.parametrize(("entry", "message"), [
    ("{name: Bad, homepage: 'https://a.example', feed_url: 'ftp://a.example/f'}", "'Bad'.*feed_url"),
    ("{name: Bad, homepage: 'https://a.example', feed_url: 'https://a/f', source_tier: 7}", "'Bad'.*source_tier"),
    ("{name: Bad, homepage: 'https://a.example', feed_url: 'https://a/f', enabled: maybe}", "'Bad'.*enabled"),
    ("{name: Bad, homepage: 'https://a.example', feed_url: 'https://a/f', colour: red}", "'Bad'.*colour"),
    ("{homepage: 'https://a.example', feed_url: 'https://a/f'}", "source #2.*name"),
    ("just a string", "source #2.*mapping"),
])
def test_a_bad_entry_is_named(entry: str, message: str) -> None:
    text = f"sources:\n- {{name: Good, homepage: 'https://g.example', feed_url: 'https://g.example/f'}}\n- {entry}\n"
    with pytest.raises(SourceConfigError, match=message):
        parse_sources(text, "test.yaml")


@pytest.mark.parametrize("text", ["sources: [", "sources: []", "other: 1"])
def test_unusable_documents_are_refused(text: str) -> None:
    with pytest.raises(SourceConfigError, match="test.yaml"):
        parse_sources(text, "test.yaml")


def test_duplicate_names_are_refused() -> None:
    one = "{name: Same, homepage: 'https://g.example', feed_url: 'https://g.example/f'}"
    with pytest.raises(SourceConfigError, match="'Same' is listed twice"):
        parse_sources(f"sources:\n- {one}\n- {one}\n", "test.yaml")


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    env = {"CTIWIRE_SOURCES_FILE": str(tmp_path / "nope.yaml"), "CTIWIRE_DATA_DIR": str(tmp_path)}
    with pytest.raises(SettingsError, match="nope.yaml: cannot read"):  # at start-up, with the settings
        load_settings(env)
    with pytest.raises(SourceConfigError, match="nope.yaml: cannot read"):  # and should it go later
        load_sources(load_settings({"CTIWIRE_DATA_DIR": str(tmp_path)}).replace(sources_file=tmp_path / "nope.yaml"))
