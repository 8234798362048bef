"""The saved-feed page in a real Chromium: a Pro user creates a feed with the form, copies its TAXII URL
with the copy button, the URLs the page shows answer through the real API with the demo key, the feed is
edited and deleted; the page fits a phone and a laptop (screenshots under the test's tmp dir)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import SIZES, Site, emulate, save_page, sign_in, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec

pytestmark = pytest.mark.slow  # a real Chromium and a server process

TAXII_ACCEPT = "application/taxii+json;version=2.1"


def _fill(driver: Any, name: str, checked: list[tuple[str, str]], texts: dict[str, str]) -> None:
    form = driver.find_element(By.CSS_SELECTOR, "[data-testid=create-feed-form]")
    form.find_element(By.NAME, "name").send_keys(name)
    for filter_name, value in checked:
        form.find_element(By.CSS_SELECTOR, f"input[name={filter_name}][value='{value}']").click()
    for filter_name, text in texts.items():
        form.find_element(By.NAME, filter_name).send_keys(text)
    form.find_element(By.CSS_SELECTOR, "[data-testid=create-feed]").click()


def _fits(driver: Any, width: int) -> bool:
    return int(driver.execute_script("return document.documentElement.scrollWidth")) <= width


def test_create_copy_use_edit_and_delete_a_feed(viewport: Any, web_server: Site, tmp_path: Path) -> None:
    server, demo = web_server
    emulate(viewport, "laptop", "light")
    sign_in(viewport, server.url, demo["accounts"]["pro"])
    viewport.get(server.url + "/account/feeds")
    _fill(
        viewport,
        "SOC: network, high",
        [("type", "ipv4"), ("type", "domain"), ("confidence", "high")],
        {"threat_actor": ""},
    )
    card = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=feed-card]")))
    assert "SOC: network, high" in card.text and "IOC types: ipv4, domain" in card.text
    taxii = card.find_element(By.CSS_SELECTOR, "[data-testid=endpoint-taxii]")
    url = taxii.find_element(By.CSS_SELECTOR, "[data-testid=url]").text
    button = taxii.find_element(By.CSS_SELECTOR, "[data-testid=copy-url]")
    button.click()
    wait(viewport).until(lambda _: button.text.startswith("Copied"))
    kinds = [e.get_attribute("data-testid") for e in card.find_elements(By.CSS_SELECTOR, "dd[data-testid]")]
    assert kinds[:2] == ["endpoint-json", "endpoint-taxii"] and "endpoint-export-stix" in kinds
    save_page(viewport, tmp_path, "feeds-laptop")
    assert _fits(viewport, SIZES["laptop"][0])

    json_url = card.find_element(By.CSS_SELECTOR, "[data-testid=endpoint-json] [data-testid=url]").text
    stix_url = card.find_element(By.CSS_SELECTOR, "[data-testid=endpoint-export-stix] [data-testid=url]").text
    with httpx.Client(headers={"Authorization": f"Bearer {demo['pro']}"}, timeout=60) as api:
        rows = api.get(json_url, params={"limit": 1000}).json()["data"]
        objects = api.get(url + "objects/", headers={"Accept": TAXII_ACCEPT}).json().get("objects", [])
        bundle = api.get(stix_url)
    assert rows and {r["type"] for r in rows} <= {"ipv4", "domain"} and {r["confidence"] for r in rows} == {"high"}
    assert objects and bundle.status_code == 200 and bundle.json()["type"] == "bundle"

    emulate(viewport, "phone", "dark")
    viewport.get(server.url + "/account/feeds")
    save_page(viewport, tmp_path, "feeds-phone")
    assert _fits(viewport, SIZES["phone"][0])

    viewport.find_element(By.CSS_SELECTOR, "[data-testid=edit-feed]").click()
    form = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=edit-feed-form]")))
    form.find_element(By.CSS_SELECTOR, "input[name=type][value='domain']").click()  # unchecked: ipv4 only
    form.find_element(By.CSS_SELECTOR, "[data-testid=save-feed]").click()
    card = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=feed-card]")))
    assert (
        "IOC types: ipv4" in card.text
        and "domain" not in card.find_element(By.CSS_SELECTOR, "[data-testid=feed-filters]").text
    )
    card.find_element(By.CSS_SELECTOR, "[data-testid=delete-feed]").click()
    wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=no-feeds]")))
