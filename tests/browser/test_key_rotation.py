"""Rotating a key in a real Chromium, then the real API with the old and the new secret, inside and after
the grace the person chose. The grace is ended by moving its stored end into the past (no waiting an hour):
the server process reads the same SQLite file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import sign_in
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait
from support import ServerProcess, cli_env, spawn_server

from store.records import iso, utcnow

pytestmark = pytest.mark.slow  # a real Chromium and a server process

EMAIL, PASSWORD = "rota@corp.example", "a long enough password"


@pytest.fixture(scope="module")
def rotation_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    data = tmp_path_factory.mktemp("rotation")
    env = cli_env(data)
    server = spawn_server(env, "--no-seed")
    try:
        yield server, data
    finally:
        server.stop()


def _status(url: str, secret: str) -> tuple[int, str | None]:
    answer = httpx.get(url + "/api/v1/iocs", params={"limit": 1}, headers={"X-API-Key": secret}, timeout=30)
    return answer.status_code, None if answer.status_code == 200 else answer.json()["error"]["code"]


def test_rotate_then_use_the_old_and_new_secret_inside_and_after_the_grace(
        browser: Any, rotation_site: tuple[ServerProcess, Path]) -> None:
    server, data = rotation_site
    wait = WebDriverWait(browser, 30)
    browser.get(server.url + "/account/signup")
    browser.find_element(By.NAME, "email").send_keys(EMAIL)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    wait.until(ec.url_contains("/account/signin"))  # a sign-up signs nobody in: the form tells nothing
    sign_in(browser, server.url, {"email": EMAIL, "password": PASSWORD})
    browser.find_element(By.CSS_SELECTOR, "[data-testid=create-key-form] [name=name]").send_keys("siem")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=create-key]").click()
    old = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=new-key-secret]"))).text
    browser.get(server.url + "/account/keys")
    browser.find_element(By.CSS_SELECTOR, "[data-key-name=siem] [data-testid=rotate-key]").click()
    wait.until(ec.url_contains("/account/keys/siem/rotate"))
    browser.find_element(By.CSS_SELECTOR, "[data-testid=grace-24h]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-testid=confirm-rotate]").click()
    new = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=new-key-secret]"))).text
    until = browser.find_element(By.CSS_SELECTOR, "[data-testid=old-until]").text
    assert new.startswith("sk_live_") and new != old and until.endswith("UTC")
    assert _status(server.url, old) == (200, None) and _status(server.url, new) == (200, None)  # inside
    with sqlite3.connect(data / "ctiwire.sqlite3") as db:  # the grace's end, 24 hours on, moved to the past
        moved = db.execute("UPDATE api_keys SET previous_expires_at = ? WHERE name = 'siem'",
                           (iso(utcnow() - timedelta(seconds=1)),)).rowcount
    assert moved == 1
    assert _status(server.url, old) == (401, "expired_api_key")  # after
    assert _status(server.url, new) == (200, None)
    browser.get(server.url + "/account/keys")
    row = browser.find_element(By.CSS_SELECTOR, "[data-key-name=siem]").text
    assert new[:12] in row and old[:12] not in row  # one key, showing the new secret's prefix
