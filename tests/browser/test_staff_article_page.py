"""The staff article page in the browser: its links in running text are told apart from the
text by more than colour (axe-core's link-in-text-block)."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests import factories
from tests.browser.conftest import ARTIFACTS, PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_links_in_the_staff_article_pages_text_are_underlined(live_server, visitor) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url
    factories.staff("mod", password=PASSWORD)
    article = factories.article(1, title="A post to moderate", link="https://example.org/m")
    page = visitor("mod", base)
    page.goto(f"{base}/staff/a/{article.id}/")
    results = Axe().run(page, options={"runOnly": ["link-in-text-block"]}).response
    found = [
        f"{' '.join(map(str, node['target']))}: {node['html'][:80]}"
        for violation in results["violations"]
        for node in violation["nodes"]
    ]
    assert not found, "\n".join(found)
    (ARTIFACTS / "pages").mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(
            path=str(ARTIFACTS / "pages" / f"staff-article-links-{width}.png"), full_page=True
        )
