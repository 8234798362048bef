"""Real-browser tests of the account web: Debian's Chromium and chromedriver through Selenium.

No browser is ever downloaded: the system binaries are used (``scripts/test`` installs them with apt-get
when it runs as root), and the tests skip with that reason when they are missing. A failing test saves a
screenshot of the page under its tmp dir and prints the path. ``CTIWIRE_SCREENSHOTS=DIR`` also keeps a
screenshot of every page the tests visit, for a person to look at.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ServerProcess, cli_env, spawn_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, "report_" + report.when, report)


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, dict[str, Any]]]:
    data = tmp_path_factory.mktemp("web")
    server = spawn_server(cli_env(data, CTIWIRE_SEED_ARTICLES="400"))
    try:
        yield server, json.loads((data / "demo-keys.json").read_text())
    finally:
        server.stop()


@pytest.fixture(scope="module")
def chrome() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed "
                    "(scripts/test installs them with apt-get when it runs as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                 "--disable-gpu", "--no-first-run", "--disable-extensions"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser(chrome: Any, web_server: tuple[ServerProcess, dict[str, Any]], request: pytest.FixtureRequest,
            tmp_path: Path) -> Iterator[Any]:
    """The shared Chromium, signed out; a screenshot is saved when the test fails."""
    chrome.delete_all_cookies()
    yield chrome
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        shot = tmp_path / f"{request.node.name}.png"
        chrome.save_screenshot(str(shot))
        print(f"screenshot of the failing page: {shot}")


@pytest.fixture
def viewport(browser: Any) -> Iterator[Any]:
    """The browser with its viewport and colour scheme set by the test; both are reset afterwards."""
    yield browser
    browser.set_window_size(1280, 900)  # the chrome fixture's size
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
