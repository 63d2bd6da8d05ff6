"""Who may write is decided by the services, from the Actor: staff-only writes refuse a
member, owner-or-staff writes refuse anyone else, whatever front end (or none) calls them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from articles.errors import NotAllowed
from articles.store import selectors, services
from articles.types import Actor, NewPost
from tests.reliability.hostile import snapshot, without_volatile

POSTER = Actor(pk=10, name="poster", is_staff=False)
OTHER = Actor(pk=11, name="other", is_staff=False)
STAFF = Actor(pk=12, name="mod", is_staff=True)


@pytest.fixture
def world() -> SimpleNamespace:
    """A group, an article of POSTER's in it, a comment of POSTER's under it."""
    services.group_create(name="red", description="Red", actor=STAFF)
    services.group_create(name="blue", actor=STAFF)
    article = services.article_post(
        NewPost(user_id=POSTER.pk, poster_name=POSTER.name, title="Mine", text="x", groups=("red",))
    )
    comment = services.comment_post(
        article_id=article.id, user_id=POSTER.pk, author_name=POSTER.name, text="hi"
    )
    return SimpleNamespace(article=article.id, comment=comment.id)


def _staff_writes(w: SimpleNamespace, actor: Actor) -> dict[str, Callable[[], object]]:
    return {
        "group_create": lambda: services.group_create(name="green", actor=actor),
        "group_update": lambda: services.group_update(name="red", description="R", actor=actor),
        "group_delete": lambda: services.group_delete(name="red", actor=actor, reason="merged"),
        "article_groups_update": lambda: services.article_groups_update(
            article_id=w.article, add=["blue"], actor=actor, reason="moved"
        ),
        "comment_remove": lambda: services.comment_remove(
            comment_id=w.comment, actor=actor, reason="spam"
        ),
    }


@pytest.mark.parametrize("actor", [POSTER, OTHER], ids=["poster", "other"])
def test_every_staff_only_service_refuses_a_member_and_changes_nothing(
    world: SimpleNamespace, actor: Actor
) -> None:
    for name, write in _staff_writes(world, actor).items():
        before = without_volatile(snapshot())
        with pytest.raises(NotAllowed):
            write()
        assert without_volatile(snapshot()) == before, name


def test_every_staff_only_service_lets_staff_do_it(world: SimpleNamespace) -> None:
    for name, write in _staff_writes(world, STAFF).items():
        before = snapshot()
        write()
        assert snapshot() != before, name


def test_owner_or_staff_services_refuse_anyone_else(world: SimpleNamespace) -> None:
    before = without_volatile(snapshot())
    refused: dict[str, Callable[[], object]] = {
        "article_edit": lambda: services.article_edit(
            article_id=world.article, title="Theirs", actor=OTHER
        ),
        "article_delete": lambda: services.article_delete(article_id=world.article, actor=OTHER),
        "comment_edit": lambda: services.comment_edit(
            comment_id=world.comment, text="theirs", actor=OTHER
        ),
        "comment_delete": lambda: services.comment_delete(comment_id=world.comment, actor=OTHER),
    }
    for name, write in refused.items():
        with pytest.raises(NotAllowed):
            write()
        assert without_volatile(snapshot()) == before, name
    # ...while the owner may, and staff may edit and delete any article.
    services.article_edit(article_id=world.article, title="Still mine", actor=POSTER)
    assert services.comment_edit(comment_id=world.comment, text="hello", actor=POSTER).edited
    edited = services.article_edit(article_id=world.article, title="Tidied", actor=STAFF)
    assert edited.title == "Tidied"
    services.article_delete(article_id=world.article, actor=STAFF, reason="spam")
    assert selectors.article_list().count == 0


def test_staff_acting_as_the_poster_are_held_to_the_posters_rule(world: SimpleNamespace) -> None:
    """The poster's own pages pass Actor.as_poster(): a staff member there edits only their
    own article, unlogged, as any poster."""
    with pytest.raises(NotAllowed):
        services.article_edit(article_id=world.article, title="X", actor=STAFF.as_poster())


WRITES_WITH_AN_ACTOR = [
    services.article_edit,
    services.article_delete,
    services.article_groups_update,
    services.comment_edit,
    services.comment_delete,
    services.comment_remove,
    services.group_create,
    services.group_update,
    services.group_delete,
]


@pytest.mark.parametrize("write", WRITES_WITH_AN_ACTOR, ids=lambda f: f.__name__)
def test_a_write_names_its_actor_with_no_default(write: Callable[..., object]) -> None:
    """No permissive default: a caller that forgets the actor gets a TypeError, never staff."""
    parameters = inspect.signature(inspect.unwrap(write)).parameters
    assert parameters["actor"].default is inspect.Parameter.empty
    assert parameters["actor"].annotation in (Actor, "Actor")
    assert not {"is_staff", "actor_id", "user_id"} & set(parameters)


def test_an_actor_is_read_from_a_logged_in_user_only() -> None:
    user = SimpleNamespace(pk=5, is_staff=True, get_username=lambda: "ann")
    assert Actor.of(user) == Actor(pk=5, name="ann", is_staff=True)
    assert Actor.of(user).as_poster() == Actor(pk=5, name="ann", is_staff=False)
    visitor = SimpleNamespace(pk=None, is_staff=False, get_username=lambda: "")
    with pytest.raises(NotAllowed):
        Actor.of(visitor)
