"""Every page of the account web on a phone (390x844) and a laptop (1366x900), light and dark, in a real
Chromium: no horizontal scroll, no serious or critical axe-core violation (WCAG 2.2 AA and best practice),
and a full-page screenshot of each (under the test's tmp dir; also in ``CTIWIRE_SCREENSHOTS`` when set).

axe-core is the npm package ``scripts/test`` fetches (pinned there) into ``.cache/axe-core/``; it is read
from disk and injected into the page, never downloaded here. Without it the tests skip and say so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_support import SIZES, Site, demo_records, emulate, save_page, sign_in, sign_in_and_create_key, wait
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec

pytestmark = pytest.mark.slow  # a real Chromium and a server process

AXE = Path(__file__).resolve().parents[2] / ".cache" / "axe-core" / "axe.min.js"
SIGNED_OUT = {"landing": "/", "signin": "/account/signin", "signup": "/account/signup",
              "error": "/account/nope", "docs": "/api/docs", "forgot": "/account/forgot",
              "reset": "/account/reset?token=from-the-mail"}
SIGNED_IN = {"keys": "/account/keys", "feeds": "/account/feeds", "webhooks": "/account/webhooks",
             "usage": "/account/usage",
             "dashboard": "/account/dashboard?window=30d",
             "dashboard-1d": "/account/dashboard?window=1d",
             "dashboard-no-such-window": "/account/dashboard?window=90d",
             "search-empty": "/search", "search-refused": "/search?q=%3Cb%3Enot+an+indicator%3C%2Fb%3E",
             "articles": "/articles", "iocs": "/iocs", "settings": "/account/settings", "delete": "/account/delete"}
# Swagger UI is a third-party bundle (swagger-ui-bundle): axe finds its own markup's faults there (an unnamed
# "Servers" select, buttons nested in operation summaries, its pale version stamps and method labels), which
# only a fork could fix; so on the docs page axe checks our parts (header, intro, footer) and the scroll
# width covers the whole page.
OWN_PARTS = {"docs": {"include": [["header.top"], ["main > p"], ["footer"]]}}
LONG_NAME = "a-rather-long-key-name-for-the-siem-in-production"
KEY_PAGES = ("delete", "edit", "rotate")  # one key's own pages, for the key the test creates


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        pytest.skip(f"axe-core is not at {AXE}: scripts/test fetches it with npm (npm pack axe-core@<pinned>)")
    return AXE.read_text()


@pytest.fixture(scope="module")
def lookup_pages(web_server: Site) -> dict[str, str]:
    """The look-up pages of a demo record: an indicator that has a related article (searched in its defanged
    form), a CVE, that article's page and a filtered IOC list."""
    server, demo = web_server
    return {name: path for name, path in demo_records(server.url, demo["pro"]).items() if name != "value"}


def axe_problems(driver: Any, source: str, context: dict[str, Any] | None = None) -> list[str]:
    """The serious and critical violations axe-core finds on the current page, one line each."""
    driver.set_script_timeout(60)
    driver.execute_script(source)
    found = driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "axe.run(arguments[0] || document, {resultTypes: ['violations']})"
        ".then(function (r) { done(JSON.stringify(r.violations)); }, function (e) { done(JSON.stringify("
        "[{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}])); });", context)
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:5]}"
            for v in json.loads(found) if v["impact"] in ("serious", "critical")]


def check_page(driver: Any, source: str, name: str, folder: Path, width: int) -> list[str]:
    """Screenshot, scroll width and axe of the page the browser shows; the problems found. ``width`` is the
    emulated viewport's: a mobile viewport widens ``innerWidth`` to fit a page that overflows."""
    save_page(driver, folder, name)
    scroll = driver.execute_script("return document.documentElement.scrollWidth")
    problems = [f"{name}: scrollWidth {scroll} > viewport {width}"] if scroll > width else []
    spill = driver.execute_script(  # a table wider than the page's column (the keys table's action buttons)
        "var main = document.querySelector('main'), m = main.getBoundingClientRect().right"
        " - parseFloat(getComputedStyle(main).paddingRight);"
        "return Array.from(document.querySelectorAll('main table')).some(function (t) {"
        "  return t.getBoundingClientRect().right > m + 1; });")
    problems += [f"{name}: a table spills past the main column"] if spill else []
    page = name.split("-")[0]
    return problems + [f"{name}: {p}" for p in axe_problems(driver, source, OWN_PARTS.get(page))]


def open_page(driver: Any, url: str, name: str) -> None:
    driver.get(url)
    if name == "docs":
        wait(driver).until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".swagger-ui .info .title")))


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(SIZES))
def test_every_page_fits_and_passes_axe(viewport: Any, web_server: Site, axe_source: str, tmp_path: Path,
                                        lookup_pages: dict[str, str], size: str, scheme: str) -> None:
    server, demo = web_server
    emulate(viewport, size, scheme)
    problems: list[str] = []
    for name, path in SIGNED_OUT.items():
        open_page(viewport, server.url + path, name)
        problems += check_page(viewport, axe_source, f"{name}-{size}-{scheme}", tmp_path, SIZES[size][0])
    key_name = f"{LONG_NAME}-{size}-{scheme}"
    sign_in_and_create_key(viewport, server.url, demo["accounts"]["pro"], key_name, expires_in_days="3")
    problems += check_page(viewport, axe_source, f"keys-new-secret-{size}-{scheme}", tmp_path, SIZES[size][0])
    one_key = {f"key-{action}": f"/account/keys/{key_name}/{action}" for action in KEY_PAGES}
    for name, path in {**SIGNED_IN, **lookup_pages, "error-signed-in": "/account/keys/x/y", **one_key}.items():
        open_page(viewport, server.url + path, name)
        problems += check_page(viewport, axe_source, f"{name}-{size}-{scheme}", tmp_path, SIZES[size][0])
    viewport.find_element(By.CSS_SELECTOR, "[data-testid=confirm-rotate]").click()  # the rotate page was last
    wait(viewport).until(ec.visibility_of_element_located((By.CSS_SELECTOR, "[data-testid=old-until]")))
    problems += check_page(viewport, axe_source, f"keys-rotated-{size}-{scheme}", tmp_path, SIZES[size][0])
    assert not problems, "\n".join(problems) + f"\nscreenshots: {tmp_path}"


def test_phone_header_folds_behind_a_menu_that_opens(viewport: Any, web_server: Site, axe_source: str,
                                                     tmp_path: Path) -> None:
    server, demo = web_server
    emulate(viewport, "phone", "light")
    sign_in_and_create_key(viewport, server.url, demo["accounts"]["free"], "phone-menu")
    header = viewport.find_element(By.CSS_SELECTOR, "[data-testid=site-header]")
    signout = viewport.find_element(By.CSS_SELECTOR, "[data-testid=signout]")
    assert not signout.is_displayed() and header.size["height"] < 80
    toggle = viewport.find_element(By.CSS_SELECTOR, "[data-testid=menu-toggle]")
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true" and signout.is_displayed()
    who = viewport.find_element(By.CSS_SELECTOR, "[data-testid=signed-in-as]")
    for element in (who, signout):
        assert element.rect["x"] + element.rect["width"] <= 390, element.text
    assert not check_page(viewport, axe_source, "menu-open-phone-light", tmp_path, 390)


def test_phone_tables_become_cards_and_the_chart_label_is_readable(viewport: Any, web_server: Site,
                                                                    tmp_path: Path) -> None:
    server, demo = web_server
    emulate(viewport, "phone", "light")
    sign_in_and_create_key(viewport, server.url, demo["accounts"]["pro"], LONG_NAME)
    for path in ("/account/keys", "/account/usage"):
        viewport.get(server.url + path)
        name = viewport.find_element(By.CSS_SELECTOR, f"tr[data-key-name='{LONG_NAME}'] .name")
        assert name.size["width"] > 300, (path, name.size)  # a card spans the screen: no letter-per-line names
    viewport.get(server.url + "/account/dashboard?window=30d")
    panels = viewport.find_elements(By.CSS_SELECTOR, ".grid .panel")
    assert len({panel.rect["x"] for panel in panels}) == 1  # one column
    for window in ("30d", "1d"):
        viewport.get(server.url + f"/account/dashboard?window={window}")
        chart_fills_its_frame(viewport, "stats-chart")
    viewport.get(server.url + "/account/usage")
    chart_fills_its_frame(viewport, "history-chart")
    save_page(viewport, tmp_path, "dashboard-phone-checked")


def chart_fills_its_frame(driver: Any, testid: str) -> None:
    """The bars span the plot from edge to edge, and the axes' labels are readable, inside it and apart."""
    figure = driver.find_element(By.CSS_SELECTOR, f"[data-testid={testid}]")
    svg = figure.find_element(By.TAG_NAME, "svg").rect
    bars = [bar.rect for bar in figure.find_elements(By.CSS_SELECTOR, "svg rect:not(.refused)")]
    slot = svg["width"] / len(bars)
    assert svg["width"] > 250 and bars[0]["x"] - svg["x"] < slot and svg["x"] + svg["width"] - (
        bars[-1]["x"] + bars[-1]["width"]) < slot, (svg, bars[0], bars[-1])
    ticks = [t for t in figure.find_elements(By.CSS_SELECTOR, ".x-axis span") if t.is_displayed()]
    assert len(ticks) >= 3
    for tick, after in zip(ticks, ticks[1:], strict=False):
        assert tick.rect["x"] + tick.rect["width"] < after.rect["x"], (tick.text, after.text)
    for label in [*ticks, figure.find_element(By.CSS_SELECTOR, ".y-top")]:
        assert float(label.value_of_css_property("font-size").removesuffix("px")) >= 12, label.text


@pytest.mark.parametrize("size", list(SIZES))
def test_a_pro_window_on_free_says_so(viewport: Any, web_server: Site, axe_source: str, tmp_path: Path,
                                      size: str) -> None:
    server, demo = web_server
    emulate(viewport, size, "light")
    sign_in(viewport, server.url, demo["accounts"]["free"])  # no new key: Free allows only a few
    viewport.get(server.url + "/account/dashboard?window=7d")
    note = viewport.find_element(By.CSS_SELECTOR, "[data-testid=window-note]")
    assert note.is_displayed() and note.text.startswith("7 days is a Pro feature")
    assert not viewport.find_elements(By.CSS_SELECTOR, "a[data-testid=window-7d]")  # not a link that falls back
    chart_fills_its_frame(viewport, "stats-chart")
    assert not check_page(viewport, axe_source, f"dashboard-free-7d-{size}-light", tmp_path, SIZES[size][0])


def test_the_first_tab_shows_a_skip_link_to_the_content(viewport: Any, web_server: Site) -> None:
    server, _ = web_server
    emulate(viewport, "phone", "light")
    viewport.get(server.url + "/")
    viewport.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    skip = viewport.switch_to.active_element
    assert skip.get_attribute("class") == "skip" and skip.text == "Skip to content"
    assert skip.rect["y"] >= 0 and skip.is_displayed()  # hidden above the page until focused
    skip.send_keys(Keys.ENTER)
    assert viewport.switch_to.active_element.get_attribute("id") == "main"


@pytest.mark.parametrize("size", list(SIZES))
def test_the_usage_history_draws_a_forced_429(viewport: Any, web_server: Site, axe_source: str, tmp_path: Path,
                                              size: str) -> None:
    server, demo = web_server
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {demo['free']}"}, timeout=30) as api:
        codes = [api.get("/api/v1/iocs", params={"limit": 1}).status_code for _ in range(11)]
    assert 429 in codes  # Free: 10 a minute
    emulate(viewport, size, "dark")
    sign_in(viewport, server.url, demo["accounts"]["free"])
    viewport.get(server.url + "/account/usage")
    refused = viewport.find_elements(By.CSS_SELECTOR, "[data-testid=history-chart] svg rect.refused")
    assert refused and refused[0].size["height"] > 0
    chart_fills_its_frame(viewport, "history-chart")
    assert not check_page(viewport, axe_source, f"usage-429-{size}-dark", tmp_path, SIZES[size][0])
