"""Property-based: random operations and clock jumps against the real store and a plain
Python model of SPEC §1, compared after every step."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import pytest
from django.test import override_settings
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from articles.errors import ArticleNotFound, NotAllowed, VotingClosed
from articles.operations import audit
from articles.store import keys, selectors, services
from articles.store.connection import get_connection
from articles.types import Actor, NewPost, Order, Vote
from tests.actors import member_actor, staff_actor

log = logging.getLogger("reliability")
pytestmark = pytest.mark.slow

VOTE_SCORE = 432
WINDOW = 604_800
GOOD = 3  # a small threshold, so the good-article rule is exercised
GROUPS = ("a", "b", "c")
START = 2_000_000_000  # future: real-clock EXPIREAT never fires during the test
STEPS = {"count": 0}


@dataclass
class ModelArticle:
    """SPEC §1 for one article, nothing else."""

    poster: int
    time: int
    up: set[int] = field(default_factory=set)
    down: set[int] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)

    @property
    def score(self) -> int:
        return self.time + VOTE_SCORE * (len(self.up) - len(self.down))

    def open(self, now: int) -> bool:
        return now < self.time + WINDOW


class StoreVersusModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        get_connection().flushdb()
        for name in GROUPS:
            services.group_create(name=name, actor=staff_actor())
        self.now = START
        self.articles: dict[int, ModelArticle] = {}
        self.deleted: set[int] = set()

    def _any_id(self, data: st.DataObject) -> int:
        known = sorted(self.articles) + sorted(self.deleted)
        return data.draw(st.sampled_from(known)) if known else 1

    @rule(user=st.integers(1, 6), groups=st.sets(st.sampled_from(GROUPS), max_size=2))
    def post(self, user: int, groups: set[str]) -> None:
        article = services.article_post(
            NewPost(
                user_id=user,
                poster_name=f"u{user}",
                title="t",
                text="x",
                groups=groups,
                now=self.now,
            )
        )
        assert article.id not in self.articles
        self.articles[article.id] = ModelArticle(user, self.now, {user}, set(), set(groups))

    @precondition(lambda self: self.articles or self.deleted)
    @rule(data=st.data(), user=st.integers(1, 6), direction=st.sampled_from(list(Vote)))
    def vote(self, data: st.DataObject, user: int, direction: Vote) -> None:
        article_id = self._any_id(data)
        model = self.articles.get(article_id)
        if model is None:
            with pytest.raises(ArticleNotFound):
                services.article_vote(
                    article_id=article_id, user_id=user, direction=direction, now=self.now
                )
            return
        if not model.open(self.now):
            with pytest.raises(VotingClosed):
                services.article_vote(
                    article_id=article_id, user_id=user, direction=direction, now=self.now
                )
            return
        got = services.article_vote(
            article_id=article_id, user_id=user, direction=direction, now=self.now
        )
        model.up.discard(user)
        model.down.discard(user)
        if direction is Vote.UP:
            model.up.add(user)
        elif direction is Vote.DOWN:
            model.down.add(user)
        assert got.my_vote is direction
        assert (got.votes, got.downvotes, got.score) == (
            len(model.up),
            len(model.down),
            model.score,
        )

    @precondition(lambda self: self.articles)
    @rule(data=st.data(), add=st.sets(st.sampled_from(GROUPS)), drop=st.sampled_from(GROUPS))
    def move(self, data: st.DataObject, add: set[str], drop: str) -> None:
        article_id = data.draw(st.sampled_from(sorted(self.articles)))
        add.discard(drop)
        now = services.article_groups_update(
            article_id=article_id, add=add, remove=[drop], actor=staff_actor()
        )
        model = self.articles[article_id]
        model.groups = (model.groups | add) - {drop}
        assert set(now) == model.groups

    @precondition(lambda self: self.articles)
    @rule(data=st.data(), actor=st.integers(1, 6), staff=st.booleans())
    def delete(self, data: st.DataObject, actor: int, staff: bool) -> None:
        article_id = data.draw(st.sampled_from(sorted(self.articles)))
        model = self.articles[article_id]
        allowed = staff or (actor == model.poster and model.open(self.now))
        if not allowed:
            with pytest.raises(NotAllowed):
                services.article_delete(
                    article_id=article_id, now=self.now, actor=member_actor(actor, "")
                )
            return
        services.article_delete(
            article_id=article_id,
            reason="rule",
            now=self.now,
            actor=Actor(pk=actor, name="", is_staff=staff),
        )
        del self.articles[article_id]
        self.deleted.add(article_id)

    @rule(
        jump=st.one_of(
            st.sampled_from([1, 3_600, 86_400, WINDOW - 1, WINDOW, WINDOW + 1]),
            st.integers(0, 2 * WINDOW),
        )
    )
    def clock_jump(self, jump: int) -> None:
        self.now += jump

    @invariant()
    def store_matches_model(self) -> None:
        STEPS["count"] += 1
        conn = get_connection()
        for article_id, model in self.articles.items():
            got = selectors.article_get(article_id=article_id)
            assert (got.votes, got.downvotes, got.score, got.time) == (
                len(model.up),
                len(model.down),
                model.score,
                model.time,
            )
            assert set(got.groups) == model.groups
            if model.open(self.now):
                up = {int(m.split(b":")[1]) for m in conn.smembers(keys.voted(article_id))}
                down = {int(m.split(b":")[1]) for m in conn.smembers(keys.voted_down(article_id))}
                assert (up, down) == (model.up, model.down)
            assert (conn.zscore(keys.GOOD, keys.article(article_id)) is not None) == (
                len(model.up) >= GOOD
            )
        for article_id in self.deleted:
            assert not conn.exists(keys.article(article_id))
        listing = selectors.article_list(order=Order.SCORE)
        assert listing.count == len(self.articles)
        scores = [a.score for a in listing.items]
        assert scores == sorted(scores, reverse=True)
        expected = sorted((m.score for m in self.articles.values()), reverse=True)
        assert scores == expected[: len(scores)]
        for name in GROUPS:
            members = {a for a, m in self.articles.items() if name in m.groups}
            page = selectors.group_article_list(name=name, order=Order.TIME)
            assert {a.id for a in page.items} == members
        assert audit.invariant_audit(now=self.now) == []


def test_random_operations_and_clock_jumps_keep_the_store_equal_to_the_model():
    STEPS["count"] = 0
    with override_settings(ARTICLES_GOOD_ARTICLE_VOTES=GOOD, ARTICLES_PER_PAGE=100):
        run_state_machine_as_test(
            StoreVersusModel,
            settings=settings(
                max_examples=30,
                stateful_step_count=25,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
                database=None,
            ),
        )
        # Audited under GOOD = 3 at every step; the last state means nothing at 200.
        get_connection().flushdb()
    log.info(f"model: {STEPS['count']} steps compared with the model")
