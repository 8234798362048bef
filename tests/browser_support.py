"""Helpers of the real-browser tests (tests/browser): viewport sizes and colour schemes, full-page
screenshots, sign-in, and demo records found through the API for the look-up pages."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait
from support import ServerProcess

Site = tuple[ServerProcess, dict[str, Any]]
SIZES = {"phone": (390, 844), "laptop": (1366, 900)}


def emulate(driver: Any, size: str, scheme: str) -> None:
    width, height = SIZES[size]
    driver.set_window_size(width, height)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": size == "phone"})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": scheme}]})


def save_page(driver: Any, folder: Path, name: str) -> Path:
    """A full-page PNG (not only the viewport) in ``folder`` and in ``CTIWIRE_SCREENSHOTS`` when set."""
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    data = base64.b64decode(shot["data"])
    targets = [folder] + ([Path(os.environ["CTIWIRE_SCREENSHOTS"])] if os.environ.get("CTIWIRE_SCREENSHOTS") else [])
    for target in targets:
        target.mkdir(parents=True, exist_ok=True)
        (target / f"{name}.png").write_bytes(data)
    return folder / f"{name}.png"


def wait(driver: Any, seconds: float = 30) -> WebDriverWait:  # type: ignore[type-arg]
    return WebDriverWait(driver, seconds)


def sign_in(driver: Any, url: str, account: dict[str, str]) -> None:
    driver.get(url + "/account/signin")
    driver.find_element(By.NAME, "email").send_keys(account["email"])
    driver.find_element(By.NAME, "password").send_keys(account["password"])
    driver.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    wait(driver).until(ec.url_contains("/account/keys"))


def sign_in_and_create_key(driver: Any, url: str, account: dict[str, str], key_name: str,
                           expires_in_days: str = "") -> None:
    sign_in(driver, url, account)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=create-key-form] [name=name]").send_keys(key_name)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=create-key-form] [name=expires_in_days]").send_keys(
        expires_in_days)
    driver.find_element(By.CSS_SELECTOR, "[data-testid=create-key]").click()
    wait(driver).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=new-key-secret]")))


def demo_records(url: str, key: str) -> dict[str, str]:
    """Paths (and ``value``, the indicator) of demo records, found through the API with the Pro demo key."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as api:
        page = api.get("/api/v1/articles", params={"has_iocs": "true", "limit": 100}).json()
        articles = [a for a in page["data"] if a.get("cve_ids")] or page["data"]
        found = api.get("/api/v1/lookup", params={"value": _first_ioc(api, articles[0]["id"])}).json()
    value = found["value"]
    defanged = value.replace(".", "[.]").replace("http", "hxxp", 1)
    cve = (articles[0].get("cve_ids") or ["CVE-2024-3400"])[0]
    return {"value": value, "search": "/search?" + urlencode({"q": defanged}), "search-cve": f"/search?q={cve}",
            "article": f"/articles/{articles[0]['id']}", "iocs-filtered": "/iocs?window=7d&type=domain"}


def _first_ioc(api: httpx.Client, article_id: str) -> str:
    return str(api.get(f"/api/v1/articles/{article_id}").json()["iocs"][0]["value"])
