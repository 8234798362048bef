"""A person's path through the account web in a real Chromium."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait
from support import ServerProcess

pytestmark = pytest.mark.slow  # a real Chromium and a server process

Site = tuple[ServerProcess, dict[str, Any]]


def keep_screenshot(driver: Any, name: str) -> None:
    """With CTIWIRE_SCREENSHOTS=DIR, keep a picture of the current page for a person to look at."""
    target = os.environ.get("CTIWIRE_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(target) / f"{name}.png"))


def wait(driver: Any, seconds: float = 15) -> WebDriverWait:  # type: ignore[type-arg]
    return WebDriverWait(driver, seconds)


def fill_and_submit(driver: Any, fields: dict[str, str], form: str = "main form") -> None:
    for name, value in fields.items():
        box = driver.find_element(By.CSS_SELECTOR, f"{form} [name='{name}']")
        box.clear()
        box.send_keys(value)
    button = driver.find_element(By.CSS_SELECTOR, f"{form} button[type=submit]")
    button.click()
    # Every form here posts to the server: wait for the next page, or a check made right after could read
    # the page being left (its flash message goes stale under a loaded machine).
    wait(driver).until(left(button))


def left(element: Any) -> Any:
    """A wait condition: ``element``'s page was replaced. ``ec.staleness_of`` only knows the stale-element
    error; when the page is replaced during its check, chromedriver answers "Node with given id does not
    belong to the document" instead, which means the same."""

    def check(_driver: Any) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" not in str(exc):
                raise
            return True
        return False

    return check


def sign_in(driver: Any, url: str, email: str, password: str) -> None:
    driver.get(url + "/account/signin")
    fill_and_submit(driver, {"email": email, "password": password})
    wait(driver).until(ec.url_contains("/account/keys"))


def test_sign_up_create_use_and_delete_a_key(browser: Any, web_server: Site) -> None:
    server, _ = web_server
    browser.get(server.url + "/")
    keep_screenshot(browser, "landing")
    browser.find_element(By.LINK_TEXT, "Sign up (Free)").click()
    wait(browser).until(ec.url_contains("/account/signup"))
    keep_screenshot(browser, "signup")
    fill_and_submit(browser, {"email": "newcomer@corp.example", "password": "a long enough password"})
    wait(browser).until(ec.url_contains("/account/signin"))  # signing up does not sign in
    flash = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=flash]")))
    assert "Sign in with the e-mail and password you chose" in flash.text
    keep_screenshot(browser, "signed-up")
    fill_and_submit(browser, {"email": "newcomer@corp.example", "password": "a long enough password"})
    wait(browser).until(ec.url_contains("/account/keys"))
    fill_and_submit(browser, {"name": "my-siem"}, form="form[data-testid=create-key-form]")
    secret_box = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR,
                                                                       "[data-testid=new-key-secret]")))
    secret = secret_box.text.strip()
    assert secret.startswith("sk_live_")
    keep_screenshot(browser, "keys-new-secret")
    browser.find_element(By.CSS_SELECTOR, "[data-testid=copy-secret]").click()
    answer = httpx.get(server.url + "/api/v1/articles", params={"limit": 1},
                       headers={"Authorization": f"Bearer {secret}"})
    assert answer.status_code == 200
    browser.get(server.url + "/account/keys")  # revisiting never shows the secret again
    assert secret not in browser.page_source and not browser.find_elements(By.CSS_SELECTOR,
                                                                           "[data-testid=new-key-secret]")
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})  # works without script
    try:
        row = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-row][data-key-name='my-siem']")
        row.find_element(By.CSS_SELECTOR, "[data-testid=delete-key]").click()
        wait(browser).until(ec.url_contains("/account/keys/my-siem/delete"))  # asks first: nothing deleted yet
        facts = browser.find_element(By.CSS_SELECTOR, "[data-testid=key-facts]").text
        assert "my-siem" in facts and secret[:12] in facts and "Last used" in facts
        assert httpx.get(server.url + "/api/v1/articles", headers={"X-API-Key": secret}).status_code == 200
        browser.find_element(By.CSS_SELECTOR, "[data-testid=confirm-delete]").click()
        flash = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=flash]")))
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    assert "deleted" in flash.text
    refused = httpx.get(server.url + "/api/v1/articles", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "expired_api_key"


def test_demo_account_sees_the_dashboard_chart(browser: Any, web_server: Site) -> None:
    server, demo = web_server
    account = demo["accounts"]["pro"]
    sign_in(browser, server.url, account["email"], account["password"])
    keep_screenshot(browser, "keys")
    browser.get(server.url + "/account/dashboard?window=30d")
    chart = wait(browser).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=stats-chart] svg")))
    bars = chart.find_elements(By.TAG_NAME, "rect")
    assert len(bars) == 31 and chart.size["width"] > 300  # 30 days back touch 31 dates: the first is partial
    assert sum(float(bar.get_attribute("height") or 0) for bar in bars) > 0  # the demo data has IOCs
    keep_screenshot(browser, "dashboard")
    browser.get(server.url + "/account/usage")
    assert browser.find_elements(By.CSS_SELECTOR, "[data-testid=usage-row]")
    keep_screenshot(browser, "usage")


def test_api_docs_run_a_request_with_a_pasted_key(browser: Any, web_server: Site) -> None:
    server, demo = web_server
    browser.get(server.url + "/api/docs")
    wait(browser, 30).until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".swagger-ui .info .title")))
    browser.find_element(By.CSS_SELECTOR, "button.authorize").click()
    box = wait(browser).until(ec.visibility_of_element_located(
        (By.CSS_SELECTOR, ".modal-ux input[type=text], .modal-ux input[type=password]")))
    box.send_keys(demo["pro"])
    browser.find_element(By.CSS_SELECTOR, ".modal-ux .auth-btn-wrapper button.authorize").click()
    browser.find_element(By.CSS_SELECTOR, ".modal-ux button.btn-done").click()
    operation = browser.find_element(By.CSS_SELECTOR, "#operations-default-get_api_v1_sources, "
                                                      "[id$='get_api_v1_sources']")
    operation.find_element(By.CSS_SELECTOR, ".opblock-summary").click()
    wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, "button.try-out__btn"))).click()
    wait(browser).until(ec.element_to_be_clickable((By.CSS_SELECTOR, "button.execute"))).click()
    status = wait(browser, 30).until(ec.visibility_of_element_located(
        (By.CSS_SELECTOR, ".live-responses-table .response .response-col_status")))
    assert status.text.strip().startswith("200")
    keep_screenshot(browser, "api-docs")


def test_sign_out_then_pages_ask_to_sign_in(browser: Any, web_server: Site) -> None:
    server, demo = web_server
    account = demo["accounts"]["free"]
    sign_in(browser, server.url, account["email"], account["password"])
    browser.find_element(By.CSS_SELECTOR, "[data-testid=signout]").click()
    wait(browser).until(ec.url_contains("/account/signin"))
    keep_screenshot(browser, "signin")
    browser.get(server.url + "/account/usage")
    wait(browser).until(ec.url_contains("/account/signin?next=/account/usage"))
