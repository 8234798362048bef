"""A person's account in a real Chromium, with its mail read from the outbox (no SMTP configured): sign up
with ``CTIWIRE_SIGNUP=verify`` and follow the mailed link, reset a forgotten password from the mail, delete
the account. The pages on the way are checked at both sizes like every page (test_responsive)."""

from __future__ import annotations

import email
import email.policy
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser.test_account_web import fill_and_submit, sign_in, wait
from browser.test_responsive import AXE, SIZES, check_page, emulate
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from support import ServerProcess, cli_env, spawn_server

pytestmark = pytest.mark.slow  # a real Chromium and a server process

EMAIL, PASSWORD, NEW = "reader@corp.example", "a long enough password", "another long passphrase"
LINK = re.compile(r"http://\S+/account/(?:reset|verify)\?token=\S+")


@pytest.fixture(scope="module")
def mail_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    data = tmp_path_factory.mktemp("mail")
    server = spawn_server(cli_env(data, CTIWIRE_SIGNUP="verify", CTIWIRE_SEED_ARTICLES="50"))
    try:
        yield server, data / "outbox"
    finally:
        server.stop()


@pytest.fixture
def page(chrome: Any) -> Iterator[Any]:
    chrome.delete_all_cookies()
    yield chrome
    chrome.set_window_size(1280, 900)
    chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    chrome.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def mail_link(outbox: Path, count: int, subject: str) -> str:
    """The link of the ``count``-th message in the outbox, waited for (it leaves in the background)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        files = sorted(outbox.glob("*.eml")) if outbox.exists() else []
        if len(files) >= count:
            message = email.message_from_bytes(files[count - 1].read_bytes(), policy=email.policy.default)
            assert message["Subject"] == subject and message["To"] == EMAIL
            found = LINK.search(message.get_content())  # type: ignore[attr-defined]
            assert found, message.get_content()  # type: ignore[attr-defined]
            return found.group(0)
        time.sleep(0.2)
    raise AssertionError(f"no message #{count} in {outbox}")


def flash(driver: Any) -> str:
    return str(wait(driver).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=flash]"))).text)


def fits_and_passes_axe(driver: Any, name: str, folder: Path) -> list[str]:
    """The current page at both sizes (light): no sideways scroll, no serious axe finding."""
    if not AXE.exists():
        pytest.skip(f"axe-core is not at {AXE}")
    problems = []
    for size, (width, _) in SIZES.items():
        emulate(driver, size, "light")
        driver.refresh()
        problems += check_page(driver, AXE.read_text(), f"{name}-{size}-light", folder, width)
    emulate(driver, "laptop", "light")
    return problems


def test_verify_then_forget_and_reset_the_password_from_the_outbox(page: Any, mail_site: tuple[ServerProcess, Path],
                                                                   tmp_path: Path) -> None:
    server, outbox = mail_site
    page.get(server.url + "/account/signup")
    fill_and_submit(page, {"email": EMAIL, "password": PASSWORD})
    assert "follow the link we sent" in flash(page)
    sign_in(page, server.url, EMAIL, PASSWORD)
    banner = page.find_element(By.CSS_SELECTOR, "[data-testid=verify-banner]")
    assert "Confirm your e-mail address" in banner.text
    problems = fits_and_passes_axe(page, "keys-unverified", tmp_path)
    page.get(mail_link(outbox, 1, "Confirm your ctiwire e-mail address"))
    assert "confirmed" in flash(page) and not page.find_elements(By.CSS_SELECTOR, "[data-testid=verify-banner]")
    page.delete_all_cookies()
    page.get(server.url + "/account/signin")
    page.find_element(By.CSS_SELECTOR, "[data-testid=forgot-link]").click()
    wait(page).until(ec.url_contains("/account/forgot"))
    problems += fits_and_passes_axe(page, "forgot", tmp_path)
    fill_and_submit(page, {"email": EMAIL})
    assert "link to choose a new password is on its way" in flash(page)
    page.get(mail_link(outbox, 2, "Choose a new ctiwire password"))
    problems += fits_and_passes_axe(page, "reset", tmp_path)
    fill_and_submit(page, {"password": NEW})
    assert "every session has ended" in flash(page)
    fill_and_submit(page, {"email": EMAIL, "password": PASSWORD})
    assert "Wrong e-mail or password" in flash(page)
    sign_in(page, server.url, EMAIL, NEW)
    assert not problems, "\n".join(problems) + f"\nscreenshots: {tmp_path}"


def test_delete_the_account_after_confirming_with_the_password(page: Any, mail_site: tuple[ServerProcess, Path],
                                                               tmp_path: Path) -> None:
    server, outbox = mail_site
    sign_in(page, server.url, EMAIL, NEW)  # the account of the test before
    page.find_element(By.CSS_SELECTOR, "[data-testid=create-key-form] [name=name]").send_keys("doomed")
    page.find_element(By.CSS_SELECTOR, "[data-testid=create-key]").click()
    secret = wait(page).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=new-key-secret]"))).text
    page.get(server.url + "/account/settings")
    problems = fits_and_passes_axe(page, "settings", tmp_path)
    page.find_element(By.CSS_SELECTOR, "[data-testid=delete-account-link]").click()
    wait(page).until(ec.url_contains("/account/delete"))
    problems += fits_and_passes_axe(page, "delete", tmp_path)
    fill_and_submit(page, {"current": "not my password"}, form="[data-testid=delete-account-form]")
    assert "not your current password" in flash(page)
    fill_and_submit(page, {"current": NEW}, form="[data-testid=delete-account-form]")
    wait(page).until(ec.url_contains("/account/signin"))
    assert "is deleted" in flash(page)
    answer = httpx.get(server.url + "/api/v1/articles", params={"limit": 1},
                       headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    assert answer.status_code == 401
    fill_and_submit(page, {"email": EMAIL, "password": NEW})
    assert "Wrong e-mail or password" in flash(page)
    assert not problems, "\n".join(problems) + f"\nscreenshots: {tmp_path}"
