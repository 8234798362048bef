"""The allowlist page in a real Chromium: a Pro user adds entries one a line (a defanged domain among them),
sees them listed, deletes one, and has a refused line explained; the page fits a phone and a laptop
(screenshots under the test's tmp dir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser_support import SIZES, Site, emulate, save_page, sign_in, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

pytestmark = pytest.mark.slow  # a real Chromium and a server process


def _add(driver: Any, lines: str, note: str = "") -> None:
    form = driver.find_element(By.CSS_SELECTOR, "[data-testid=allowlist-form]")
    form.find_element(By.NAME, "entries").send_keys(lines)
    if note:
        form.find_element(By.NAME, "note").send_keys(note)
    form.find_element(By.CSS_SELECTOR, "[data-testid=add-entries]").click()


def _fits(driver: Any, width: int) -> bool:
    return int(driver.execute_script("return document.documentElement.scrollWidth")) <= width


def test_add_list_and_delete_allowlist_entries(viewport: Any, web_server: Site, tmp_path: Path) -> None:
    server, demo = web_server
    emulate(viewport, "laptop", "light")
    sign_in(viewport, server.url, demo["accounts"]["pro"])
    viewport.get(server.url + "/account/allowlist")
    _add(viewport, "10.20.0.0/16\ncorp[.]example\nhxxps://portal.corp[.]example/login", "our own ranges")
    table = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=allowlist]")))
    rows = table.find_elements(By.CSS_SELECTOR, "[data-testid=allow-entry]")
    assert [r.find_element(By.CSS_SELECTOR, "code").text for r in rows] == [
        "10.20.0.0/16", "corp.example", "https://portal.corp.example/login"]
    assert "domain and subdomains" in rows[1].text and "our own ranges" in rows[0].text
    save_page(viewport, tmp_path, "allowlist-laptop")
    assert _fits(viewport, SIZES["laptop"][0])

    _add(viewport, "not an entry")
    flash = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=flash]")))
    assert "entries[0]" in flash.text and "not an entry" in flash.text

    emulate(viewport, "phone", "dark")
    viewport.get(server.url + "/account/allowlist")
    save_page(viewport, tmp_path, "allowlist-phone")
    assert _fits(viewport, SIZES["phone"][0])
    viewport.find_elements(By.CSS_SELECTOR, "[data-testid=delete-entry]")[0].click()
    wait(viewport).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=allow-entry]")) == 2)
