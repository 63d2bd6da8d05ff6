"""Flags in headless Chromium, with JavaScript and without: a reader flags an article and
a comment through the form, staff find them in the queue and resolve one and dismiss the
other, and the moderation log says so in words. axe-core finds nothing serious on the new
and changed pages; screenshots at 1280 and 390 px (test-artifacts/flags/, and a copy
where FLAG_SHOTS says)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests import factories
from tests.browser.conftest import ARTIFACTS, PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE, PHONE = 1280, 390
BLOCKING = ("serious", "critical")
SHOTS = ARTIFACTS / "flags"


class Audit:
    """axe-core at 1280 px, no sideways scrolling and a screenshot at 1280 and 390 px."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.axe = Axe()
        SHOTS.mkdir(parents=True, exist_ok=True)

    def check(self, page: Page, name: str, *, javascript: bool = True) -> None:
        """Without JavaScript only the screenshots: axe-core and the width are measured
        by scripts in the page (the same markup is checked in the run with it)."""
        for width in (WIDE, PHONE):
            page.set_viewport_size({"width": width, "height": 900})
            if width == WIDE and javascript:
                for violation in self.axe.run(page).response["violations"]:
                    if violation["impact"] in BLOCKING:
                        targets = "; ".join(
                            " ".join(map(str, n["target"])) for n in violation["nodes"][:4]
                        )
                        self.problems.append(f"{name}: {violation['id']} ({targets})")
            scroll_width = (
                page.evaluate("document.documentElement.scrollWidth") if javascript else 0
            )
            if scroll_width > width:
                self.problems.append(f"{name} @{width}: {scroll_width} px wide")
            shot = SHOTS / f"{name}-{width}.png"
            page.screenshot(path=str(shot), full_page=True)
            if os.environ.get("FLAG_SHOTS"):
                Path(os.environ["FLAG_SHOTS"]).mkdir(parents=True, exist_ok=True)
                shutil.copy(shot, Path(os.environ["FLAG_SHOTS"]) / shot.name)
        page.set_viewport_size({"width": WIDE, "height": 900})


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_flag_then_staff_resolve_and_dismiss(live_server, visitor, settings, javascript):  # type: ignore[no-untyped-def]
    settings.ARTICLES_FLAG_THRESHOLD = 1
    base = live_server.url
    factories.user("ann", password=PASSWORD)
    factories.user("bob", password=PASSWORD)
    factories.staff("mod", password=PASSWORD)
    spam = factories.article(1, title="Cheap watches here", link="https://example.org/w")
    fine = factories.article(1, title="A fine article", link="https://example.org/f")
    comment = factories.comment(1, fine.id, "You are all wrong, idiots")
    audit = Audit()
    suffix = "" if javascript else "-nojs"

    bob = visitor("bob", base, java_script_enabled=javascript)
    bob.goto(f"{base}/new/")
    bob.locator(f"#a{spam.id}").get_by_role("link", name="flag").click()
    expect(bob.get_by_role("heading", name="Flag this article")).to_be_visible()
    audit.check(bob, f"flag-form{suffix}", javascript=javascript)
    bob.get_by_label("spam").check()
    bob.get_by_role("button", name="Flag it").click()
    expect(bob.locator(".messages")).to_contain_text("staff will look at it")
    expect(bob.locator(".notice")).to_contain_text("Hidden from the listings")
    audit.check(bob, f"held-article{suffix}", javascript=javascript)
    bob.goto(f"{base}/new/")
    expect(bob.get_by_text("Cheap watches here")).to_have_count(0)

    bob.goto(f"{base}/a/{fine.id}/")
    bob.locator(f"#c{comment.id}").get_by_role("link", name="flag").click()
    bob.get_by_label("abusive or rude").check()
    bob.get_by_role("button", name="Flag it").click()
    folded = bob.locator(f"#c{comment.id} > details")
    expect(folded).not_to_have_attribute("open", "")
    expect(folded.locator("summary")).to_contain_text("until staff decide")
    audit.check(bob, f"held-comment{suffix}", javascript=javascript)
    bob.goto(f"{base}/a/{fine.id}/")  # flagging twice: refused on the form
    bob.goto(f"{base}/c/{comment.id}/flag/")
    bob.get_by_label("spam").check()
    bob.get_by_role("button", name="Flag it").click()
    expect(bob.get_by_role("alert")).to_contain_text("already flagged")

    mod = visitor("mod", base, java_script_enabled=javascript)
    mod.goto(f"{base}/staff/")
    mod.get_by_role("link", name="Flags").first.click()
    queue = mod.locator("table.flag-queue")
    expect(queue).to_contain_text("Cheap watches here")
    expect(queue).to_contain_text("abusive or rude: 1")
    audit.check(mod, f"staff-queue{suffix}", javascript=javascript)

    row = mod.locator(f"#flag-article-{spam.id}")
    row.get_by_role("button", name="Remove").click()  # no reason: refused, nothing removed
    expect(mod.get_by_role("alert")).to_contain_text("Give a reason")
    row = mod.locator(f"#flag-article-{spam.id}")
    row.get_by_label("Reason").fill("selling watches")
    row.get_by_role("button", name="Remove").click()
    expect(mod.locator(".messagelist")).to_contain_text("Flags resolved")
    row = mod.locator(f"#flag-comment-{comment.id}")
    row.get_by_label("Reason").fill("harsh, not abusive")
    row.get_by_role("button", name="Dismiss").click()
    expect(mod.get_by_text("Nothing is flagged.")).to_be_visible()
    audit.check(mod, f"staff-queue-empty{suffix}", javascript=javascript)

    bob.goto(f"{base}/a/{fine.id}/")
    expect(bob.locator(f"#c{comment.id} > details")).to_have_attribute("open", "")
    assert bob.goto(f"{base}/a/{spam.id}/").status == 410

    mod.goto(f"{base}/modlog/")
    log = mod.locator("table.modlog")
    expect(log).to_contain_text("upheld the flags on")
    expect(log).to_contain_text("dismissed the flags on")
    expect(log.get_by_role("link", name=f"comment {comment.id}")).to_be_visible()
    audit.check(mod, f"modlog{suffix}", javascript=javascript)
    assert not audit.problems, "\n".join(audit.problems)
