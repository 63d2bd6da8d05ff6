"""`manage.py load_demo`, which `make run` calls on a fresh machine."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from articles.management import demo_comments
from articles.management.commands.load_demo import ARTICLES
from articles.models import Profile
from articles.operations import audit
from articles.store import selectors
from articles.types import CommentOrder, Order


@pytest.mark.django_db
def test_the_demo_loads_into_an_empty_store_with_its_good_articles():
    """Ensure every demo vote lands inside its article's voting window, which Redis' own
    clock judges: an article posted more than a week ago refuses votes."""
    out = io.StringIO()
    call_command("load_demo", "--if-empty", stdout=out)
    assert "Loaded" in out.getvalue()
    assert selectors.article_list(order=Order.TIME).count == len(ARTICLES)
    assert selectors.good_article_page().count >= 1
    front = selectors.front_page()
    assert len(front.items) + len(front.rising) >= 20  # a first visit sees a full page
    call_command("load_demo", "--if-empty", stdout=out)
    assert "not loaded" in out.getvalue()


@pytest.mark.django_db
def test_a_lookalike_of_a_demo_reader_is_refused_at_sign_up(client):
    """The readers are made in bulk (no post_save): they still get their name keys."""
    call_command("load_demo", stdout=io.StringIO())
    readers = Profile.objects.filter(user__username__startswith="reader")
    assert readers.exclude(name_key=None).count() == 300
    form = {"username": "reader00l", "password1": "pw-Secret-123", "password2": "pw-Secret-123"}
    response = client.post("/signup/", form)
    assert response.status_code == 400 and "looks like another account" in response.content.decode()
    assert not get_user_model().objects.filter(username="reader00l").exists()


@pytest.mark.django_db
def test_load_demo_articles_builds_a_large_store_that_passes_the_audit():
    """Ensure the generated articles and votes (pipelined) keep every invariant, so
    check_votes finds nothing, and that the commands report their timing."""
    out = io.StringIO()
    call_command("load_demo", "--articles", "3000", stdout=out)
    assert "Generated 3,000 articles and " in out.getvalue() and " s, " in out.getvalue()
    assert selectors.article_list(order=Order.TIME).count == len(ARTICLES) + 3000
    assert selectors.good_article_page().count > 5  # the long tail reaches 200 votes
    assert audit.invariant_audit() == []
    out = io.StringIO()
    call_command("check_votes", stdout=out)
    assert f"Audited {len(ARTICLES) + 3000:,} article(s) in " in out.getvalue()
    assert "0 problem(s): none" in out.getvalue()


@pytest.mark.django_db
def test_the_demo_has_a_lively_nested_thread_and_comments_on_other_articles():
    """Ensure the demo shows what comments look like: the "favourite small tool" question
    has a nested thread with votes, several other articles have a few comments, and the
    counts on the articles are the threads' own."""
    call_command("load_demo", stdout=io.StringIO())
    listed = [selectors.article_list(order=Order.TIME, page=n).items for n in (1, 2)]
    articles = {a.title: a for page in listed for a in page}
    tool = articles[demo_comments.TOOL]
    thread = selectors.comment_thread(article_id=tool.id, order=CommentOrder.BEST)
    assert thread.count >= 5 and len(thread.items) >= 25
    assert max(c.depth for c in thread.items) >= 4
    assert sum(c.votes for c in thread.items) >= 30 and any(c.downvotes for c in thread.items)
    best = [c.best for c in thread.items if c.depth == 0]
    assert best == sorted(best, reverse=True)
    assert tool.comments == _count(demo_comments.THREADS[demo_comments.TOOL])
    commented = [
        title for title, thread in demo_comments.THREADS.items() if articles[title].comments
    ]
    assert len(commented) == len(demo_comments.THREADS) >= 5
    assert audit.invariant_audit() == []


def _count(thread) -> int:  # type: ignore[no-untyped-def]
    return sum(1 + _count(said.replies) for said in thread)


@pytest.mark.django_db
@pytest.mark.parametrize("use_tz", [True, False])
def test_demo_users_joined_before_their_first_post(client, settings, use_tz):
    """No user page says "member since" today above the demo's posts from days ago (in
    a project that keeps local, naive times too)."""
    settings.USE_TZ = use_tz
    call_command("load_demo", "--articles", "50", stdout=io.StringIO())
    posts = [a for n in range(1, 5) for a in selectors.article_list(order=Order.TIME, page=n).items]
    assert len(posts) == len(ARTICLES) + 50
    first: dict[int, float] = {}
    for post in posts:
        pk = int(post.poster.removeprefix("user:"))
        first[pk] = min(post.time, first.get(pk, post.time))
    joined = dict(get_user_model().objects.values_list("pk", "date_joined"))
    late = {pk: (joined[pk], t) for pk, t in first.items() if joined[pk].timestamp() >= t}
    assert not late, f"joined after their first post: {late}"
    alice = get_user_model().objects.get(username="alice")
    page = client.get(f"/u/{alice.pk}/", follow=True).content.decode()
    since = alice.date_joined.strftime("member since %-d %B %Y")
    assert since in page and alice.date_joined.date() < timezone.now().date()
