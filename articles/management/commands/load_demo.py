"""Load a demo data set: users, groups, articles, votes and comment threads spread over six
days; with --articles N, N more generated ones, to try the site at scale."""

from __future__ import annotations

import contextlib
import random
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import models, transaction
from django.utils import timezone

from articles.errors import DuplicateLink, GroupExists
from articles.management import demo_comments
from articles.management.progress import Timer, bar
from articles.store import clock, selectors, services
from articles.store.people import bulk_profiles
from articles.types import Actor, NewPost, Order, Vote

GROUPS = {
    "programming": "Code, languages and the craft of software.",
    "redis": "The data structure server and everything built on it.",
    "python": "The language, its libraries and its community.",
    "science": "Research, discoveries and the people behind them.",
    "cute-animals": "Pictures and stories of animals being adorable.",
}

ARTICLES = [
    (
        "Redis in Action, chapter 1: voting on articles",
        "https://redis.io/docs/latest/",
        "redis programming",
    ),
    (
        "Sorted sets are the most underrated data structure",
        "https://example.org/sorted-sets",
        "redis",
    ),
    ("A week with Django 5.2 LTS", "https://www.djangoproject.com/weblog/", "python programming"),
    ("Why your cache needs a stampede guard", "https://example.org/stampede", "programming redis"),
    ("Otters hold hands while they sleep", "https://example.org/otters", "cute-animals"),
    ("The physics of a perfect espresso", "https://example.org/espresso", "science"),
    (
        "Lua scripting patterns for atomic updates",
        "https://example.org/lua-atomic",
        "redis programming",
    ),
    ("Type hints in practice: two years later", "https://example.org/type-hints", "python"),
    ("A kitten learns to climb stairs", "https://example.org/kitten-stairs", "cute-animals"),
    ("Measuring round trips, not commands", "https://example.org/round-trips", "redis programming"),
    ("How a tiny team runs a big forum", "https://example.org/tiny-team", ""),
    ("The append-only file, explained", "https://example.org/aof", "redis"),
    (
        "Writing tests that can actually fail",
        "https://example.org/tests-that-fail",
        "programming python",
    ),
    ("Octopuses dream, probably", "https://example.org/octopus-dreams", "science cute-animals"),
    ("Sentinel failover in practice", "https://example.org/sentinel", "redis"),
    ("Ask: what is your favourite small tool?", "", "programming"),
    (
        "Pagination without the negative-index surprise",
        "https://example.org/pagination",
        "programming redis",
    ),
    ("The history of the hyperlink", "https://example.org/hyperlink", "science"),
    ("Corgis at the beach: a photo essay", "https://example.org/corgis", "cute-animals"),
    ("Profiling Django views with pyinstrument", "https://example.org/pyinstrument", "python"),
    ("Time-decayed ranking, from first principles", "https://example.org/ranking", "programming"),
    (
        "Unicode normalisation for web developers",
        "https://example.org/unicode",
        "programming python",
    ),
    ("How glaciers carve valleys", "https://example.org/glaciers", "science"),
    ("Hedgehog rescue centre opens its doors", "https://example.org/hedgehogs", "cute-animals"),
    (
        "Show: a voting site on Redis in 1,000 lines",
        "https://example.org/show-voting",
        "redis python",
    ),
    ("Idempotency keys for APIs, done right", "https://example.org/idempotency", "programming"),
    ("What a unix socket buys you", "https://example.org/unix-sockets", "programming redis"),
    ("Bees can count to four", "https://example.org/bees-count", "science cute-animals"),
    ("The cost of a network round trip in 2026", "https://example.org/rtt-2026", "programming"),
    ("Ask: how do you moderate a small community?", "", ""),
]

# Words for the generated articles' titles (--articles N).
_OPENERS = ["Why", "How", "When", "What", "Show:", "Ask:", "Notes on", "A guide to", "Against"]
_SUBJECTS = [
    "sorted sets", "Lua scripts", "round trips", "otters", "glaciers", "type hints", "caches",
    "pagination", "sentinels", "espresso", "hedgehogs", "unicode", "backups", "rate limits",
    "the append-only file", "small teams", "hyperlinks", "voting windows", "bees", "queues",
]  # fmt: skip
_ENDINGS = [
    "matter more than you think", "in practice", "from first principles", "at scale",
    "for beginners", "after ten years", "without the surprises", "explained", "done right", "",
]  # fmt: skip

DEMO_PASSWORD = "votesite-demo"  # noqa: S105 - printed for the local demo only
DAYS = 6  # the demo's articles are spread over the last DAYS days (inside the voting week)


class Command(BaseCommand):
    help = (
        "Load demo users, groups, articles and votes (with --if-empty: only into an empty store)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--if-empty", action="store_true", help="do nothing if articles exist")
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument(
            "--articles",
            type=int,
            default=0,
            metavar="N",
            help="also N generated articles with votes, sent in pipelined batches",
        )

    def handle(self, *args: Any, if_empty: bool, seed: int, articles: int, **options: Any) -> None:
        if if_empty and selectors.article_list(order=Order.TIME).count:
            self.stdout.write("The store already has articles; demo data not loaded.")
            return
        rng = random.Random(seed)
        people, named_readers = self._users()
        # Its own generator: the articles, votes and comments stay those of the seed.
        _joined_before([*people.values(), *named_readers.values()], clock.now(), seed)
        readers = [user.pk for user in named_readers.values()]
        # The command is the operator's: it acts as staff, in the moderator's name.
        staff = people["moderator"]
        moderator = Actor(pk=staff.pk, name=staff.get_username(), is_staff=True)
        for name, description in GROUPS.items():
            with contextlib.suppress(GroupExists):
                services.group_create(name=name, description=description, actor=moderator)
        now = clock.now()
        posted_articles = {}
        for i, (title, link, groups) in enumerate(ARTICLES):
            poster = list(people.values())[i % len(people)]
            # Within the week: Redis' own clock judges the voting window, so the votes below
            # (dated after their post) would be refused on an article older than that.
            posted = now - rng.uniform(0.2, DAYS) * 86_400
            text = "" if link else "Tell us below, and vote for the answers you like."
            try:
                article = services.article_post(
                    NewPost(
                        user_id=poster.pk,
                        poster_name=poster.get_username(),
                        title=title,
                        link=link,
                        text=text,
                        groups=tuple(groups.split()),
                        now=posted,
                    )
                )
            except DuplicateLink as exc:
                if i == 0:  # the demo is there already; nothing is written before this
                    raise CommandError(ALREADY.format(exc.article_id)) from None
                continue  # a link someone else posted this week: the demo goes without it
            posted_articles[title] = article
            # A few articles gather enough votes to be good articles (>= 200 up-votes).
            ups = rng.choice([230, 260]) if i in (0, 4, 6, 12, 24) else rng.randint(0, 60)
            downs = rng.randint(0, 12)
            voters = rng.sample(readers, min(len(readers), ups + downs))
            for n, voter in enumerate(voters):
                direction = Vote.UP if n < ups else Vote.DOWN
                services.article_vote(
                    article_id=article.id,
                    user_id=voter,
                    direction=direction,
                    now=posted + 60 + n * 30,
                )
        authors = {**named_readers, **people}
        comments, _ = demo_comments.load(posted_articles, authors, rng, clock.now(), readers)
        if articles > 0:
            self._generated(articles, rng, readers)
        self.stdout.write(
            self.style.SUCCESS(
                f"Loaded {len(ARTICLES)} demo articles in {len(GROUPS)} groups, with "
                f"{comments} comments. Log in as "
                f"'alice' (or 'moderator', who is staff) with password '{DEMO_PASSWORD}'."
            )
        )

    def _generated(self, count: int, rng: random.Random, readers: list[int]) -> None:
        """`count` articles by the readers over the last six days, each with its poster's
        vote and a long-tailed number of others (most few, a handful past the good-article
        mark), through the same scripts as the site, in pipelined batches."""
        timer, now, groups = Timer(), clock.now(), list(GROUPS)
        User = get_user_model()
        names = {u.pk: u.get_username() for u in User._default_manager.filter(pk__in=readers)}
        posts, votes_of = [], []
        for n in range(count):
            poster = rng.choice(readers)
            title = f"{rng.choice(_OPENERS)} {rng.choice(_SUBJECTS)} {rng.choice(_ENDINGS)}"
            posts.append(
                NewPost(
                    user_id=poster,
                    poster_name=names[poster],
                    title=f"{title.strip()} (#{n + 1})",
                    link=f"https://example.org/demo/{rng.getrandbits(64):016x}",
                    groups=tuple(rng.sample(groups, rng.choice((0, 1, 1, 2)))),
                    now=now - rng.uniform(0.2, DAYS) * 86_400,
                )
            )
            ups = min(len(readers) - 1, int(rng.paretovariate(1.1)) - 1)
            votes_of.append((ups, rng.randint(0, max(1, ups // 8))))
        posted, voted = 0, 0
        with bar(unit="article", total=count, desc="articles") as shown:
            for start in range(0, count, 2_000):
                chunk = posts[start : start + 2_000]
                ids = services.article_post_many(posts=chunk)
                votes: list[tuple[int, int, Vote, float | None]] = []
                for article_id, post, (ups, downs) in zip(
                    ids, chunk, votes_of[start : start + 2_000], strict=True
                ):
                    others = [
                        r
                        for r in rng.sample(readers, min(len(readers), ups + downs + 1))
                        if r != post.user_id
                    ]
                    for i, voter in enumerate(others[: ups + downs]):
                        when = (post.now or now) + 60 + i * 30
                        votes.append((article_id, voter, Vote.UP if i < ups else Vote.DOWN, when))
                voted += services.article_vote_many(votes=votes)
                posted += len(chunk)
                shown.update(len(chunk))
        self.stdout.write(
            f"Generated {posted:,} articles and {voted:,} votes "
            f"{timer.summary(posted, 'articles')}."
        )

    @transaction.atomic
    def _users(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The demo's people (alice, bob, carol, dave, moderator) and its readers
        (reader001...reader300), each by its demo name, made through the project's user
        model: its login field holds the name, or name@example.org when the login is an
        e-mail address."""
        User = get_user_model()
        people = {}
        for name in ("alice", "bob", "carol", "dave", "moderator"):
            login: dict[str, Any] = {User.USERNAME_FIELD: _login(name)}
            user, created = User._default_manager.get_or_create(**login)
            if created:
                user.set_password(DEMO_PASSWORD)
                user.is_staff = name == "moderator"
                user.save()
            people[name] = user
        wanted = {_login(f"reader{n:03d}"): f"reader{n:03d}" for n in range(1, 301)}
        field = User.USERNAME_FIELD
        existing = set(
            User._default_manager.filter(**{f"{field}__in": wanted}).values_list(field, flat=True)
        )
        unusable = "!"  # Django's marker: no password can log in
        with transaction.atomic():
            User._default_manager.bulk_create(
                [
                    User(**{field: login}, password=unusable)
                    for login in wanted
                    if login not in existing
                ]
            )
            # bulk_create sends no post_save: their profiles (name keys) are made here.
            mine = User._default_manager.filter(**{f"{field}__in": wanted})
            bulk_profiles(mine.filter(articles_profile=None))
        return people, {wanted[u.get_username()]: u for u in mine.order_by("pk")}


def _joined_before(users: list[Any], now: float, seed: int) -> None:
    """Date each demo user's joining (when the user model keeps one) a week to a year
    before the demo's first article, so no user page says "member since" today above
    posts from days ago. An earlier date, from an earlier load, is kept."""
    User = get_user_model()
    if "date_joined" not in {f.name for f in User._meta.get_fields()}:
        return
    rng = random.Random(seed)
    changed = []
    for user in users:
        joined = now - (DAYS + 1 + rng.uniform(0, 358)) * 86_400
        when = datetime.fromtimestamp(joined, tz=UTC)
        if not settings.USE_TZ:
            when = timezone.make_naive(when)
        if user.date_joined is None or user.date_joined > when:
            user.date_joined = when
            changed.append(user)
    User._default_manager.bulk_update(changed, ["date_joined"])


def _login(name: str) -> str:
    """A demo person's login: the name, or an address made of it for an e-mail login."""
    User = get_user_model()
    if isinstance(User._meta.get_field(User.USERNAME_FIELD), models.EmailField):
        return f"{name}@example.org"
    return name


ALREADY = (
    "The store holds the demo already (its first link is article {}, still open for "
    "voting): load the demo into an empty store, or pass --if-empty to skip it quietly."
)
