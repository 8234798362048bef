"""The look-up flows in a real Chromium at a phone's and a laptop's size: search a defanged indicator and
copy its hunting query, open a related article and see its IOCs, filter the IOCs and download the STIX
export (read back by stix2); a Free account sees the Pro note instead of the download buttons."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import stix2
from browser_support import SIZES, Site, demo_records, emulate, save_page, sign_in, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select

pytestmark = pytest.mark.slow  # a real Chromium and a server process


@pytest.mark.parametrize("size", list(SIZES))
def test_search_an_indicator_then_open_its_article(viewport: Any, web_server: Site, tmp_path: Path,
                                                   size: str) -> None:
    server, demo = web_server
    emulate(viewport, size, "light")
    record = demo_records(server.url, demo["pro"])
    sign_in(viewport, server.url, demo["accounts"]["free"])
    viewport.get(server.url + "/search")
    box = viewport.find_element(By.ID, "q")
    box.send_keys(record["value"].replace(".", "[.]").replace("http", "hxxp", 1))
    viewport.find_element(By.CSS_SELECTOR, "[data-testid=search-submit]").click()
    shown = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=lookup-value]")))
    assert shown.text == record["value"]
    copy = viewport.find_element(By.CSS_SELECTOR, "[data-testid=copy-splunk_spl]")
    copy.click()
    wait(viewport).until(lambda d: copy.text.startswith("Copied"))
    save_page(viewport, tmp_path, f"flow-search-{size}")
    viewport.find_element(By.CSS_SELECTOR, "[data-testid=related-articles] a").click()
    iocs = wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=article-iocs]")))
    assert record["value"] in iocs.text
    save_page(viewport, tmp_path, f"flow-article-{size}")


@pytest.mark.parametrize("size", list(SIZES))
def test_filter_the_iocs_and_download_the_stix_export(viewport: Any, web_server: Site, tmp_path: Path,
                                                      size: str) -> None:
    server, demo = web_server
    emulate(viewport, size, "light")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    viewport.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    sign_in(viewport, server.url, demo["accounts"]["pro"])
    viewport.get(server.url + "/iocs")
    Select(viewport.find_element(By.NAME, "window")).select_by_value("7d")
    Select(viewport.find_element(By.NAME, "type")).select_by_value("domain")
    viewport.find_element(By.CSS_SELECTOR, "[data-testid=apply-filters]").click()
    wait(viewport).until(ec.url_contains("type=domain"))
    cells = wait(viewport).until(  # the filtered page has loaded its rows (a URL change comes before the page)
        lambda d: d.find_elements(By.CSS_SELECTOR, "[data-testid=ioc-row] td[data-label=Type]"))
    types = {cell.text for cell in cells}
    assert types == {"domain"}
    viewport.find_element(By.CSS_SELECTOR, "[data-testid=download-stix]").click()
    bundle = stix2.parse(_downloaded(downloads).read_text(), allow_custom=True)
    patterns = [o.pattern for o in bundle.objects if o.type == "indicator"]
    assert patterns and all(p.startswith("[domain-name:value") for p in patterns)


def test_a_free_account_sees_the_pro_note(viewport: Any, web_server: Site, tmp_path: Path) -> None:
    server, demo = web_server
    emulate(viewport, "phone", "light")
    sign_in(viewport, server.url, demo["accounts"]["free"])
    viewport.get(server.url + "/iocs")
    assert viewport.find_element(By.CSS_SELECTOR, "[data-testid=pro-note]").is_displayed()
    assert not viewport.find_elements(By.CSS_SELECTOR, "[data-testid^=download-]")
    assert [o.get_attribute("value") for o in Select(viewport.find_element(By.NAME, "window")).options] == ["1d"]


def _downloaded(folder: Path, seconds: float = 60) -> Path:
    """The file the browser saved in ``folder`` once it is complete (waiting only; nothing is timed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if not p.name.endswith(".crdownload")]
        if done:
            return done[0]
        time.sleep(0.2)
    raise AssertionError(f"no download in {folder}: {list(folder.iterdir())}")
