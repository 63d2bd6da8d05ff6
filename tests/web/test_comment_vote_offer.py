"""A comment vote asked for while logged out is carried through the login, as an article
vote is: the arrow leads to the vote's own page (/c/<id>/vote/offer/), which sends a
visitor to the login page (saying why) and back, offers the vote as a form, and returns to
the comment. And a comment or reply posted from a thread comes back to that thread, its
sort and page kept, at the new comment."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import pytest

from articles.store import selectors
from tests.factories import article, comment
from tests.web.forms import login, post, text_of

pytestmark = pytest.mark.django_db


def test_a_logged_out_comment_arrow_leads_to_the_votes_own_page(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id, "Worth a vote.")
    # Twice: the second page is made from the kept row, its path filled in again.
    for path in (f"/a/{a.id}/?sort=new", f"/a/{a.id}/"):
        page = text_of(client.get(path))
        offer = f"/c/{c.id}/vote/offer/?direction=up&amp;next={quote(path, safe='/')}"
        assert f'href="{offer}"' in page, page[page.index(f'id="c{c.id}"') :][:1500]
        assert "Log in to vote up" in page


def test_the_offer_asks_for_a_login_saying_why_then_offers_the_vote(client, make_user):
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id, "Worth a vote.")
    offer = f"/c/{c.id}/vote/offer/?direction=down&next=/a/{a.id}/%3Fsort%3Dnew"
    response = client.get(offer)
    assert response.status_code == 302
    to = urlsplit(response["Location"])
    assert to.path == "/accounts/login/"
    assert parse_qs(to.query)["next"] == [
        f"/c/{c.id}/vote/offer/?direction=down&next=/a/{a.id}/%3Fsort%3Dnew"
    ]
    page = text_of(client.get(response["Location"]))
    assert "Log in to vote." in page and "Your down-vote on the comment is offered" in page
    login(client, make_user("bob"))
    page = text_of(client.get(offer))
    assert "You asked to vote down this comment." in page and "Worth a vote." in page
    assert f'action="/c/{c.id}/vote/"' in page and 'name="direction" value="down"' in page
    assert f'name="next" value="/a/{a.id}/?sort=new"' in page
    cast = client.post(f"/c/{c.id}/vote/", {"direction": "down", "next": f"/a/{a.id}/?sort=new"})
    assert cast["Location"] == f"/a/{a.id}/?sort=new#c{c.id}"
    assert selectors.comment_get(comment_id=c.id).downvotes == 1
    again = text_of(client.get(offer))
    assert "your down-vote is counted already" in again


def test_a_logged_out_vote_form_goes_through_the_offer(client, make_user):
    """A vote form sent after the session ended (no script) is not lost either."""
    ann = make_user("ann")
    a = article(ann)
    c = comment(ann, a.id)
    response = client.post(f"/c/{c.id}/vote/", {"direction": "up", "next": f"/a/{a.id}/"})
    assert response.status_code == 302
    (next_,) = parse_qs(urlsplit(response["Location"]).query)["next"]
    assert next_ == f"/c/{c.id}/vote/offer/?direction=up&next=/a/{a.id}/"


def test_the_offer_refuses_a_direction_it_does_not_know(client, make_user):
    ann = make_user("ann")
    c = comment(ann, article(ann).id)
    assert client.get(f"/c/{c.id}/vote/offer/?direction=sideways").status_code == 400
    login(client, make_user("bob"))
    assert client.get("/c/999/vote/offer/?direction=up").status_code == 404


def test_a_reply_comes_back_to_the_thread_it_was_sent_from(csrf_client, make_user):
    ann = make_user("ann")
    a = article(ann)
    top = comment(ann, a.id, "Top.")
    login(csrf_client, ann)
    thread = f"/a/{a.id}/?sort=best&page=1"
    form = text_of(csrf_client.get(thread))
    assert f'name="next" value="/a/{a.id}/?sort=best&amp;page=1"' in form
    response = post(
        csrf_client,
        f"/a/{a.id}/comment/",
        {"text": "A reply.", "parent": top.id, "next": thread},
        form_page=thread,
    )
    reply = selectors.comment_thread(article_id=a.id).items[1]
    assert response["Location"] == f"{thread}#c{reply.id}"
    response = post(
        csrf_client, f"/a/{a.id}/comment/", {"text": "Another.", "next": thread}, form_page=thread
    )
    assert response["Location"].startswith(f"{thread}#c")
    # Off the site, `next` is not followed: the first page of the newest comments instead.
    response = post(
        csrf_client,
        f"/a/{a.id}/comment/",
        {"text": "Third.", "next": "//evil.example/"},
        form_page=thread,
    )
    assert response["Location"].startswith(f"/a/{a.id}/?sort=new#c")


def test_a_reply_from_the_permalink_page_goes_back_to_the_thread_it_came_from(
    csrf_client, make_user
):
    """Without the script, "reply" opens the parent's permalink page with the thread as its
    `next`: its form comes back there."""
    ann = make_user("ann")
    a = article(ann)
    top = comment(ann, a.id, "Top.")
    login(csrf_client, ann)
    thread = text_of(csrf_client.get(f"/a/{a.id}/?sort=best"))
    link = f"/a/{a.id}/c/{top.id}/?next=/a/{a.id}/%3Fsort%3Dbest#reply"
    assert f'href="{link}"' in thread
    permalink = text_of(csrf_client.get(link.split("#")[0]))
    assert f'name="next" value="/a/{a.id}/?sort=best"' in permalink
