"""The demo's comment threads (`manage.py load_demo`): a lively nested thread under the
"favourite small tool" question, a few comments on several other articles, and votes on
them, written through the store's own services so every count and order is the store's."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from articles.store import services
from articles.types import Article, Vote


@dataclass(frozen=True)
class Said:
    """One demo comment: who wrote it, its Markdown, and the replies to it."""

    by: str
    text: str
    replies: Sequence[Said] = field(default_factory=tuple)


def said(by: str, text: str, *replies: Said) -> Said:
    return Said(by, text, replies)


TOOL = "Ask: what is your favourite small tool?"

THREADS: dict[str, list[Said]] = {
    TOOL: [
        said(
            "bob",
            "`jq`. I used to write little Python scripts to poke at JSON; now it is one line:\n\n"
            "```\ncurl -s https://api.example.org/items | jq '.[] | .name'\n```",
            said(
                "carol",
                "Seconded. `jq -r` for raw strings was the flag it took me a year to find.",
                said("bob", "And `--arg` so you never paste a shell variable into the filter."),
                said(
                    "reader007",
                    "Have you tried `gron`? It flattens JSON so plain `grep` works on it.",
                    said("carol", "Oh, that is clever. Installing it now."),
                    said(
                        "dave",
                        "gron plus `grep` plus `gron --ungron` is my favourite pipeline.",
                        said("reader012", "TIL `--ungron`. Thank you!"),
                    ),
                ),
            ),
            said("alice", "jq's manual is one of the best pieces of documentation I know."),
        ),
        said(
            "alice",
            "**`entr`**: run a command whenever a file changes.\n\n"
            "```\nls *.py | entr -c pytest -q\n```\n\n"
            "Tests on every save, no config file, no daemon.",
            said(
                "dave",
                "I use it to rebuild my notes into HTML. `-r` restarts a server too.",
                said(
                    "alice",
                    "Yes! `entr -r python -m http.server` is my whole static-site workflow.",
                    said(
                        "reader031",
                        "How do you get it to notice *new* files?",
                        said(
                            "alice",
                            "It exits with status 2 when a new file appears in a watched "
                            "directory (`-d`), so wrap it in a loop:\n\n"
                            "```\nwhile sleep 0.1; do ls -d src/* | entr -d make; done\n```",
                            said("reader031", "Perfect, that is exactly what I needed."),
                        ),
                    ),
                ),
            ),
            said("reader044", "Came here to say entr. Leaving happy."),
        ),
        said(
            "carol",
            "`ripgrep`. Fast, respects `.gitignore`, sensible defaults. I never type `grep -r` "
            "any more.",
            said(
                "reader019",
                "Same, and `rg --files | fzf` as a file picker.",
                said("carol", "fzf deserves its own top-level comment, honestly."),
            ),
            said(
                "bob",
                "Counterpoint: plain `grep` is on every machine you will ever ssh into.",
                said(
                    "carol",
                    "True, but I only need it to be on *my* machine to save me an hour a week.",
                ),
                said("dave", "Both can be true. Learn grep, use rg."),
            ),
        ),
        said(
            "dave",
            "A paper notebook and a pencil. The smallest tool with the best battery life.",
            said("alice", "The only tool that never needed an update."),
            said("reader003", "Until you need to search it."),
        ),
        said(
            "reader027",
            "`hyperfine` for timing commands: warm-up runs, statistics and a comparison of "
            "several commands in one go.",
            said("carol", "It made me stop trusting single `time` runs."),
        ),
        said(
            "moderator",
            "Lovely thread. A reminder that links to your own tools are welcome here, as long "
            "as you say they are yours.",
        ),
    ],
    "Redis in Action, chapter 1: voting on articles": [
        said(
            "carol",
            "The chapter's `article_vote` is two round trips and not atomic; a Lua script "
            "makes both go away.",
            said("bob", "The book predates scripting becoming common, to be fair."),
        ),
        said("reader008", "Still the clearest introduction to sorted sets I have read."),
    ],
    "Sorted sets are the most underrated data structure": [
        said(
            "alice",
            "Leaderboards, rate limits, delayed job queues, time-decayed ranking: all one "
            "`ZADD` away.",
            said("reader015", "Delayed queues with `ZRANGEBYSCORE` changed how I write workers."),
        ),
        said("dave", "Skip lists are such a nice structure to read about, too."),
    ],
    "Otters hold hands while they sleep": [
        said("reader021", "So they do not drift apart. I am not crying, you are."),
        said("bob", "Best fact of the week."),
    ],
    "Why your cache needs a stampede guard": [
        said(
            "dave",
            "We learned this one the hard way: a popular page expired and 300 workers rebuilt "
            "it at once.",
            said("carol", "A short lock around the rebuild, or serve stale while one refreshes."),
        ),
    ],
    "Ask: how do you moderate a small community?": [
        said(
            "moderator",
            "Write the rules down, short. Then enforce them the same way for everyone, and "
            "say why when you remove something.",
            said("alice", "The *say why* part is what keeps people's trust."),
        ),
        said("carol", "A public moderation log helps more than any rule."),
    ],
}


def load(
    articles: dict[str, Article],
    people: dict[str, Any],
    rng: random.Random,
    now: float,
    voters: Sequence[int],
) -> tuple[int, int]:
    """Post the demo threads on the articles of the same titles (by the users `people`
    maps the demo's names to), each comment some minutes after the one before, and vote on them.
    Returns (comments, votes) written."""
    posted = voted = 0
    for title, thread in THREADS.items():
        article = articles.get(title)
        if article is None:
            continue
        # After the article, and in the past: Redis' own clock judges the windows.
        at = article.time + 600
        step = max(60.0, min(1_800.0, (now - 600 - at) / 60))
        # Depth-first, as a thread reads: (comment, the id of its parent).
        todo: list[tuple[Said, int | None]] = [(top, None) for top in reversed(thread)]
        while todo:
            item, parent_id = todo.pop()
            at += rng.uniform(0.3, 1.0) * step
            comment = services.comment_post(
                article_id=article.id,
                user_id=people[item.by].pk,
                author_name=people[item.by].get_username(),
                text=item.text,
                parent_id=parent_id,
                now=at,
            )
            posted += 1
            voted += _votes(comment.id, len(item.replies), rng, voters, at, now)
            todo.extend((reply, comment.id) for reply in reversed(item.replies))
    return posted, voted


def _votes(
    comment_id: int, replies: int, rng: random.Random, voters: Sequence[int], at: float, now: float
) -> int:
    """A few up-votes (more for comments with replies, which drew people in) and the odd
    down-vote, cast between the comment's time and now."""
    ups = rng.randint(0, 4) + 3 * replies
    downs = rng.choice((0, 0, 0, 1, 2))
    chosen = rng.sample(list(voters), min(len(voters), ups + downs))
    for n, voter in enumerate(chosen):
        services.comment_vote(
            comment_id=comment_id,
            user_id=voter,
            vote=Vote.UP if n < ups else Vote.DOWN,
            now=min(now - 1, at + 30 + n * 20),
        )
    return len(chosen)
