"""The API's pages in headless Chromium: the docs pages (Swagger UI, ReDoc) fetch nothing from
another site, and the browsable API has a viewport, breadcrumbs of real pages only and the
site's log-in and log-out links; each has no serious or critical axe-core violation and fits
a 390 px phone (screenshots at 1280 and 390 px in test-artifacts/api/)."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import Page, Request, Route, expect

from articles import conf
from articles.store import services
from articles.types import NewPost
from tests import factories
from tests.browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "Api-pages-pw-2026"
WIDTHS = (1280, 390)
SHOTS = ARTIFACTS / "api"


def check_page(page: Page, name: str, *, full: bool = True) -> None:
    """No serious or critical axe-core violation; no wider than the window at 1280 and 390
    px; a screenshot at each."""
    results = Axe().run(page).response
    blocking = [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert not blocking, f"{name}: {blocking}"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        assert scroll_width <= width, f"{name} @{width}: {scroll_width} px wide"
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=full)


@pytest.mark.parametrize(
    ("name", "ready"),
    [
        ("docs", ".swagger-ui .opblock"),
        # ReDoc's sidebar credit, where its logo from Redocly's CDN would be.
        ("redoc", "a[href='https://redocly.com/redoc/']"),
    ],
)
def test_the_docs_pages_request_nothing_from_another_site(live_server, page, name, ready) -> None:  # type: ignore[no-untyped-def]
    site = urlsplit(live_server.url).netloc
    requested: list[str] = []
    elsewhere: list[str] = []
    errors: list[str] = []

    def route(route: Route, request: Request) -> None:
        requested.append(request.url)
        if urlsplit(request.url).scheme in ("data", "blob") or urlsplit(request.url).netloc == site:
            route.continue_()
        else:  # never leaves the machine, whatever the outcome of the test
            elsewhere.append(request.url)
            route.abort()

    page.context.route("**/*", route)
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.goto(f"{live_server.url}{reverse(f'api:{name}')}")
    expect(page.locator(ready).first).to_be_visible(timeout=30_000)  # ReDoc is slow to start
    page.wait_for_load_state("networkidle")
    assert elsewhere == [], elsewhere
    assert any(url.endswith(reverse("api:schema")) for url in requested), requested
    assert errors == [], errors
    check_page(page, f"api-{name}", full=name == "docs")  # ReDoc's page is very long


def test_the_browsable_api_has_a_viewport_real_breadcrumbs_and_log_in_and_out(
    live_server, page
) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    factories.user("dora", password=PASSWORD)
    carol = factories.user("carol", password=PASSWORD)
    article = services.article_post(
        NewPost(user_id=carol.pk, poster_name="carol", title="Sorted sets", link="", text="A text.")
    )
    viewport = page.locator("meta[name=viewport]")
    crumbs = page.locator("ul.breadcrumb li a")

    page.goto(f"{base}/api/")
    expect(viewport).to_have_attribute("content", "width=device-width, initial-scale=1")
    expect(page.locator("meta[name=description]")).to_have_attribute(
        "content", f"{conf.site_name()}'s REST API in the browser: API root."
    )
    expect(crumbs).to_have_text(["API root"])
    check_page(page, "api-root")

    path = f"/api/articles/{article.id}/?format=api"
    page.goto(base + path)
    # One crumb a page: /api/articles (no slash) is the API's 404, and has none.
    expect(crumbs).to_have_text(["API root", "Article List", "Article Instance"])
    assert [a.get_attribute("href") for a in crumbs.all()] == [
        "/api/?format=api",  # DRF keeps the format in its crumbs
        "/api/articles/?format=api",
        path,
    ]
    assert "Not Found" not in page.locator("ul.breadcrumb").inner_text()
    check_page(page, "api-article")

    log_in = page.get_by_role("link", name="Log in")
    expect(log_in).to_have_attribute("href", f"/accounts/login/?next={quote(path, safe='/')}")
    log_in.click()
    page.fill("#id_username", "dora")
    page.fill("#id_password", PASSWORD)
    page.click("form.panel button[type=submit]")
    expect(page).to_have_url(base + path)  # back where the visitor was
    expect(page.locator(".navbar")).to_contain_text("dora")
    check_page(page, "api-article-member")

    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(base + path)
    expect(page.get_by_role("link", name="Log in")).to_be_visible()
