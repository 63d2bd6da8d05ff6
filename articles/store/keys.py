"""Redis key schema for articles: the only place key names are formed.

The first block is the schema of *Redis in Action* chapter 1, kept exactly so the book's
own code can read and write our data. The second block is votesite's own additions.
Nothing here does I/O; tests/store/test_keys.py pins every name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

# A group's name follows the one rule (validation); re-exported for the readers of keys.
from articles.validation import DOMAIN as DOMAIN
from articles.validation import GROUP_NAME as GROUP_NAME

# --- The book's keys ---------------------------------------------------------------
ARTICLE_IDS = "article:"  # string: INCR counter of article ids
SCORE = "score:"  # zset: article:<id> -> post_time + 432 * (up - down)
TIME = "time:"  # zset: article:<id> -> post time (Unix seconds)

# --- votesite's additions ----------------------------------------------------------
VOTES = "votes:"  # zset: article:<id> -> net votes (up - down), the "top" ranking
GOOD = "good:"  # zset: article:<id> -> post time, for articles with >= 200 up-votes
GROUPS = "groups:"  # hash: group name -> description (the registry of groups)
# hash: <group> -> when its last vote sweep began (present: the group's rankings are kept
# by the writes), <group>:at -> the running sweep's cursor "T article:<id>" in time:<g>
# and when its last step was taken ("T article:<id> S"),
# <group>:fill -> "SSCAN-cursor began" while the rankings are being filled
GROUP_RANKS = "groups:ranked"
# The duplicate-link check: links:<b> (hash) maps an 8-byte digest of a normalised link to
# the id of the article that has it; link_slot() forms both. 4,096 small hashes, not one
# hash of whole links: Redis keeps each as a listpack (~18 B an entry against 111 B).
LINK_BUCKETS_HEX = 3  # hex digits of the digest naming the bucket: 16**3 = 4,096 buckets
LINK_INDEX_SCAN = "links:" + "[0-9a-f]" * LINK_BUCKETS_HEX
# The former index: one hash of normalised link -> article:<id>; check_votes --repair
# indexes the open articles in the buckets and then deletes it.
LEGACY_LINKS = "links:"
# string: how far links_close() walked time: (its frontier, "T" or "T article:<id>", as
# the kept periods'): every closed article up to it has had its links:<b> entry released.
LINKS_CLOSED = "links:closed"
MODLOG = "modlog:"  # list: JSON entries of staff actions, newest first
STATS_POSTS = "stats:posts"  # hash: YYYY-MM-DD -> articles posted that day (UTC)
STATS_VOTES = "stats:votes"  # hash: YYYY-MM-DD -> votes cast that day (UTC)
COMMENT_IDS = "comment:"  # string: INCR counter of comment ids
COMMENTS = "comments:"  # zset: comment:<id> -> post time, every comment site-wide (newest)
PURGE = "purge:"  # set: article:<id> / group:<name> deleted, still being cleaned up in batches
# set: article:<id> archived (ARTICLES_ARCHIVE_AFTER) whose comments are still being taken
# out of Redis in batches (archive_comments.lua); the database holds them already
ARCHIVE = "archive:"
ARCHIVE_AT = "archive:at"  # string: post time before which every article is archived
# hash: pk -> "P" or "P T article:<id>", a build of article_karma:<pk> in progress
# (karma_fill.lua): the partial sum, and the last article of submitted:<pk> it holds
ARTICLE_KARMA_FILL = "article_karma_fill:"
FORGET = "forget:"  # hash: pk -> name of a deleted account whose traces are still being removed
# string, only ever in the scratch database (ARTICLES_RESTORE_DB): an import stages there
RESTORE_STAGING = "restore:staging"
FLAGGED = "flagged:"  # zset: article:<id> / comment:<id> -> its flags: the staff queue
REMOVED = "removed:"  # hash: article:<id> -> JSON {time, reason} of its deletion by staff (410)
# stream: the live events (vote, post, comment, cvote, inbox), appended by the write scripts
# in the same step as their write, capped near ARTICLES_LIVE_EVENTS; read by store/live.py
LIVE = "live:"
# pub/sub channel (not a key): a PUBLISH on it lets WAIT cover every earlier write
REPLICATION_BARRIER = "votesite:replication-barrier"

# SCAN patterns (never KEYS): every article hash (and the id counter, which the parsers
# below refuse), every group set.
ARTICLE_SCAN = "article:*"
COMMENT_SCAN = "comment:*"
GROUP_SCAN = "group:*"
INBOX_SCAN = "inbox:*"
INBOX_STATE_SCAN = "inbox_state:*"
SEARCH_INDEX_SCAN = "postings:*"
# The former article index (idx:<word>, sets of article:<id> strings): reindex_search
# builds postings:<word> and then deletes these.
LEGACY_SEARCH_INDEX_SCAN = "idx:*"
DOMAIN_SCAN = "domain:*"
COMMENT_KARMA_SCAN = "comment_karma:*"
ARTICLE_KARMA_SCAN = "article_karma:*"
COMMENT_SEARCH_INDEX_SCAN = "comment_postings:*"
# The former comment index (cidx:<word>, sets of comment:<id> strings): reindex_search
# builds comment_postings:<word> and then deletes these.
LEGACY_COMMENT_SEARCH_INDEX_SCAN = "cidx:*"
# string: the Snowball language the whole search index was last built with (reindex_search);
# until it names the site's, a search also reads the sets of words as typed (search.lua)
SEARCH_STEMMER = "search:stemmer"
FLAGS_SCAN = "flags:*"

# ASCII digits only ([0-9], not \d, which also matches "١٢"), no leading zero, no 0:
# exactly the strings article() and user() form.
_ARTICLE_MEMBER = re.compile(r"article:([1-9][0-9]{0,17})")
_COMMENT_MEMBER = re.compile(r"comment:([1-9][0-9]{0,17})")
_USER_MEMBER = re.compile(r"user:([1-9][0-9]{0,17})")
_WORD = re.compile(r"[^\W_]{1,32}")


def article(article_id: int) -> str:
    """hash: title, link, text, poster (user:<pk>), poster_name, time, votes, downvotes, groups."""
    return f"article:{_positive(article_id)}"


def voted(article_id: int) -> str:
    """set of user:<pk> who voted up; expires at post time + one week."""
    return f"voted:{_positive(article_id)}"


def voted_down(article_id: int) -> str:
    """set of user:<pk> who voted down; expires with voted:<id>."""
    return f"voted_down:{_positive(article_id)}"


def user(user_id: int) -> str:
    """The member naming a user in voter sets and the `poster` field."""
    return f"user:{_positive(user_id)}"


def submitted(user_id: int) -> str:
    """zset: article:<id> -> post time, of the articles a user posted."""
    return f"submitted:{_positive(user_id)}"


# --- A reader's own lists (hide, save, upvoted): newest first, each at most its KEEP ---
# Scored by when the item went in; the writes trim the oldest past the cap, so a user's
# lists never grow without bound, and a listing's filtering of the hidden (lua/_lib.lua
# unhidden_page: a ZMSCORE of them all, ~0.35 ms a page at 200 on 1M articles) too.
HIDDEN_KEEP = 200  # hidden articles: a listing page looks each up (see unhidden_page)
SAVED_KEEP = 1000  # saved articles, and saved comments (as Reddit keeps 1,000 saved)
UPVOTED_KEEP = 1000  # articles up-voted, newest vote first


def hidden(user_id: int) -> str:
    """zset: article:<id> -> when hidden, the articles a user took out of their listings."""
    return f"hidden:{_positive(user_id)}"


def saved(user_id: int) -> str:
    """zset: article:<id> -> when saved, the articles a user saved."""
    return f"saved:{_positive(user_id)}"


def saved_comments(user_id: int) -> str:
    """zset: comment:<id> -> when saved, the comments a user saved."""
    return f"saved_comments:{_positive(user_id)}"


def upvoted(user_id: int) -> str:
    """zset: article:<id> -> time of the up-vote, written by vote.lua with the vote."""
    return f"upvoted:{_positive(user_id)}"


def personal(user_id: int) -> tuple[str, str, str, str]:
    """Every list of a user's own, what deleting the account deletes."""
    return hidden(user_id), saved(user_id), saved_comments(user_id), upvoted(user_id)


# SCAN patterns of the users' own lists (the audit's), with each list's cap.
PERSONAL_SCANS = {
    "hidden:*": HIDDEN_KEEP,
    "saved:*": SAVED_KEEP,
    "saved_comments:*": SAVED_KEEP,
    "upvoted:*": UPVOTED_KEEP,
}


def comment(comment_id: int) -> str:
    """hash of one comment: article (article:<id>), parent (comment:<id> or ""), author
    (user:<pk>), author_name, text, time, edited ("" or Unix s), votes, downvotes, depth
    (0 = top level), replies (direct children, tombstones included), state ("" visible,
    "deleted" by its author, "removed" by staff), reason (of a staff removal)."""
    return f"comment:{_positive(comment_id)}"


def flags(member: str) -> str:
    """hash: user:<pk> -> reason, of the users who flagged an item (article:<id> or
    comment:<id>): one flag per user per item."""
    if article_id_or_none(member) is None and comment_id_or_none(member) is None:
        raise ValueError(f"not an article or comment member: {member!r}")
    return f"flags:{member}"


def flagged_member_of(key: str) -> str:
    """The article:<id> / comment:<id> of a `flags:<member>` key; ValueError for anything
    else."""
    member = key.removeprefix("flags:") if isinstance(key, str) else ""
    if flags(member) != key:
        raise ValueError(f"not a flags key: {key!r}")
    return member


def comment_voted(comment_id: int) -> str:
    """set of user:<pk> who voted a comment up; expires when its ARTICLE's window closes."""
    return f"comment_voted:{_positive(comment_id)}"


def comment_voted_down(comment_id: int) -> str:
    """set of user:<pk> who voted a comment down; expires with comment_voted:<id>."""
    return f"comment_voted_down:{_positive(comment_id)}"


def article_comments(article_id: int) -> str:
    """zset: the article's top-level comment:<id> -> best score (types.comment_best)."""
    return f"comments:{_positive(article_id)}"


def article_comments_new(article_id: int) -> str:
    """zset: the article's top-level comment:<id> -> comment id (the counter's order)."""
    return f"comments_new:{_positive(article_id)}"


def article_comments_all(article_id: int) -> str:
    """zset: every comment:<id> of the article, tombstones included -> post time (the
    list that deleting, exporting and auditing an article's comments walk)."""
    return f"comments_all:{_positive(article_id)}"


def replies(comment_id: int) -> str:
    """zset: a comment's direct replies comment:<id> -> best score."""
    return f"replies:{_positive(comment_id)}"


def replies_new(comment_id: int) -> str:
    """zset: a comment's direct replies comment:<id> -> comment id."""
    return f"replies_new:{_positive(comment_id)}"


def user_comments(user_id: int) -> str:
    """zset: comment:<id> -> post time, of the comments a user wrote (tombstones left out),
    so a forgotten account's comments can be found and renamed "[deleted]"."""
    return f"user_comments:{_positive(user_id)}"


def comment_karma(user_id: int) -> str:
    """string: net votes (up - down) on the user's visible comments, kept by every script
    that changes them (absent: 0). The comment scripts name it from a comment's `author`
    (user:<pk> -> comment_karma:<pk>), as they name its other keys."""
    return f"comment_karma:{_positive(user_id)}"


def article_karma(user_id: int) -> str:
    """string: net votes (votes: scores) of the articles in submitted:<pk>, kept by every
    script that moves one of those scores or entries (absent: not kept yet, see
    karma_fill.lua). The article scripts name it from the poster (user:<pk> ->
    article_karma:<pk>), as the comment scripts name comment_karma:<pk>."""
    return f"article_karma:{_positive(user_id)}"


def domain(name: str) -> str:
    """zset: article:<id> -> post time, of the articles whose link is on a site, by
    validation.link_domain's name for it (lower case, IDNA ASCII, no "www.")."""
    if not isinstance(name, str) or not DOMAIN.fullmatch(name):
        raise ValueError(f"not a domain: {name!r}")
    return f"domain:{name}"


def link_slot(norm: str) -> tuple[str, bytes]:
    """links:<b> and its field for a normalised link (validation.normalize_link): its
    8-byte BLAKE2b digest is the field, the digest's first LINK_BUCKETS_HEX hex digits
    the bucket. The field's value is the id of the article holding the link. A new link
    shares a field with one held with odds of 2 in 10^12 (36.5 M held, a year's at 100,000
    a day, among 2^64 digests): it would be refused as a duplicate."""
    if not isinstance(norm, str) or not norm:
        raise ValueError(f"not a normalised link: {norm!r}")
    digest = hashlib.blake2b(norm.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return "links:" + digest.hex()[:LINK_BUCKETS_HEX], digest


def link_keys(norm: str, member: str) -> tuple[str, bytes | str]:
    """A script's key and argument for a normalised link: link_slot(norm), or (`member`,
    "") for no link (a key the script may name and never reads as links:<b>)."""
    return link_slot(norm) if norm else (member, "")


def link_holder(held: str) -> str:
    """The member a links:<b> value (an article's id) names, as link_holder in _lib.lua
    forms it; "" for none."""
    return f"article:{held}" if held else ""


def comment_idempotency(user_id: int, token: str) -> str:
    """string `<comment id>:<time>:<depth>:<fingerprint>` of the comment posted with
    this key (24 h)."""
    _token(token)
    return f"comment_idempotency:{_positive(user_id)}:{token}"


def inbox(user_id: int) -> str:
    """zset: the replies to a user's articles and comments, comment:<id> -> its number in
    the inbox (inbox_state's `seq` when added), the newest ARTICLES_INBOX_SIZE only."""
    return f"inbox:{_positive(user_id)}"


def inbox_state(user_id: int) -> str:
    """hash of a user's inbox: seq (the last number given), read (replies numbered up to it
    are read), digest (those up to it were in an e-mail digest)."""
    return f"inbox_state:{_positive(user_id)}"


def group(name: str) -> str:
    """set of article:<id> in a group."""
    return f"group:{group_name(name)}"


def group_purge(name: str) -> str:
    """set: the former members of a deleted group, whose `groups` fields still name it
    (emptied in batches, then gone); queued in purge: as group:<name>."""
    return f"purge:group:{group_name(name)}"


def group_order(order_key: str, name: str) -> str:
    """zset: a group's ranking, the book's intersection of group:<name> with `score:` or
    `time:` (score:<name>, time:<name>), kept by the writes (ranking_page.lua)."""
    if order_key not in (SCORE, TIME):
        raise ValueError(f"not an order key: {order_key!r}")
    return f"{order_key}{group_name(name)}"


def top(period: str) -> str:
    """zset cache (60 s) of `votes:` restricted to articles posted in a period."""
    if period not in ("day", "week", "month", "year"):
        raise ValueError(f"not a period: {period!r}")
    return f"top:{period}"


def top_scratch(period: str) -> str:
    """zset scratch space while building top:<period>; deleted by the same script."""
    return f"{top(period)}:tmp"


def idempotency(user_id: int, token: str) -> str:
    """string `<id>:<post time>:<fingerprint>` of the submission made with this key (24 h)."""
    _token(token)
    return f"idempotency:{_positive(user_id)}:{token}"


def _token(token: str) -> None:
    if not isinstance(token, str) or not re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", token):
        raise ValueError("idempotency key must be 1-128 characters of A-Z a-z 0-9 _ . : -")


def rate_limit(scope: str, ident: str, window: int) -> str:
    """string counter for one fixed rate-limit window; expires with the window."""
    if not re.fullmatch(r"[a-z_]{1,32}", scope) or not re.fullmatch(r"[\w.:-]{1,64}", ident):
        raise ValueError("bad rate-limit scope or identity")
    return f"ratelimit:{scope}:{ident}:{window}"


def credential_epoch(user_id: int) -> str:
    """string: Unix time of the user's last logout, password change or token revocation.
    A process honours a credential it kept only if it read it after that (articles.kept);
    expires once no process can still hold one read before (store.people)."""
    return f"credential_epoch:{_positive(user_id)}"


def vote_intent(nonce: str) -> str:
    """string, set (NX) when a signed vote intent is cast after a log-in; expires with the
    intent, so each intent is cast at most once."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{16,64}", nonce):
        raise ValueError("a vote intent nonce is 16-64 characters of A-Z a-z 0-9 _ -")
    return f"vote_intent:{nonce}"


def _word(word: str) -> str:
    if not isinstance(word, str) or not _WORD.fullmatch(word):
        raise ValueError(f"not a search word: {word!r}")
    return word


def postings(word: str) -> str:
    """set of the ids (integers, not article:<id>: Redis keeps a set of integers as an
    intset, 4 bytes a member) of the articles whose title, text or link host holds
    `word` (search.py normalises it: letters and digits only, at most 32)."""
    return f"postings:{_word(word)}"


def word_of(key: str) -> str:
    """The word of a `postings:<word>` key; ValueError for anything else."""
    if not isinstance(key, str) or not key.startswith("postings:"):
        raise ValueError(f"not a search index key: {key!r}")
    return _word(key[9:])


# What a ranking's member holds before the id a postings:<word> (comment_postings:<word>)
# member is (search.lua).
POSTING_PREFIX = "article:"
COMMENT_POSTING_PREFIX = "comment:"


def posting_id_or_none(member: str) -> int | None:
    """The id a postings:<word> or comment_postings:<word> member holds (its decimal
    digits), or None."""
    if isinstance(member, str) and member.isascii() and member.isdigit() and member[0] != "0":
        return int(member)
    return None


def comment_postings(word: str) -> str:
    """set of the ids (integers: an intset) of the comments whose text holds `word` among
    its first ARTICLES_SEARCH_COMMENT_WORDS distinct words (search.comment_words);
    tombstones are in none. Named in Lua from the words a script's caller made of the
    comment's text (comment_index in _lib.lua); the hash keeps no list of them."""
    return f"comment_postings:{_word(word)}"


def comment_word_of(key: str) -> str:
    """The word of a `comment_postings:<word>` key; ValueError for anything else."""
    if not isinstance(key, str) or not key.startswith("comment_postings:"):
        raise ValueError(f"not a comment search index key: {key!r}")
    return _word(key[17:])


def search_cache(slot: int) -> str:
    """zset cache (short TTL) of one search's results in the order asked: one of a fixed
    number of slots, so the cache keys are bounded in number."""
    if isinstance(slot, bool) or not isinstance(slot, int) or not 0 <= slot < 1_000_000:
        raise ValueError(f"not a search cache slot: {slot!r}")
    return f"search:{slot}"


def search_cache_query(slot: int) -> str:
    """string: which search search:<slot> holds now (its canonical query, order and
    restrictions); it expires with the slot."""
    return f"{search_cache(slot)}:q"


def search_scratch(slot: int) -> str:
    """set scratch space while building search:<slot>; deleted by the same script."""
    return f"{search_cache(slot)}:tmp"


def search_union(slot: int, term: int) -> str:
    """set scratch space: a query word's stem and typed sets united while the index is
    being rebuilt (search.lua); deleted by the same script."""
    if isinstance(term, bool) or not isinstance(term, int) or not 0 <= term < 100:
        raise ValueError(f"not a search term number: {term!r}")
    return f"{search_cache(slot)}:u{term}"


def group_name(name: str) -> str:
    """Return `name` if it is a valid group slug, else raise ValueError."""
    if not isinstance(name, str) or not GROUP_NAME.fullmatch(name):
        raise ValueError(f"not a group name: {name!r}")
    return name


def article_id_of(member: str) -> int:
    """The id in an `article:<id>` member; ValueError for anything else."""
    match = _ARTICLE_MEMBER.fullmatch(member) if isinstance(member, str) else None
    if match is None:
        raise ValueError(f"not an article member: {member!r}")
    return int(match.group(1))


def comment_id_of(member: str) -> int:
    """The id in a `comment:<id>` member; ValueError for anything else."""
    match = _COMMENT_MEMBER.fullmatch(member) if isinstance(member, str) else None
    if match is None:
        raise ValueError(f"not a comment member: {member!r}")
    return int(match.group(1))


def user_id_of(member: str) -> int:
    """The pk in a `user:<pk>` member (voter sets, `poster`); ValueError for anything else,
    "user:0", "user:012" and non-ASCII digits included."""
    match = _USER_MEMBER.fullmatch(member) if isinstance(member, str) else None
    if match is None:
        raise ValueError(f"not a user member: {member!r}")
    return int(match.group(1))


def article_id_or_none(member: str) -> int | None:
    """article_id_of(), or None for anything else (a listing skips what it cannot read)."""
    return _or_none(article_id_of, member)


def comment_id_or_none(member: str) -> int | None:
    """comment_id_of(), or None for anything else."""
    return _or_none(comment_id_of, member)


def user_id_or_none(member: str) -> int | None:
    """user_id_of(), or None for anything else."""
    return _or_none(user_id_of, member)


def _or_none(parse: Callable[[str], int], member: str) -> int | None:
    try:
        return parse(member)
    except ValueError:
        return None


def _positive(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"not a positive id: {value!r}")
    return value


# --- The top of each period, kept by the writes (selectors/rankings.py: the design) ------
PERIODS = ("day", "week", "month", "year")  # the kept periods; types.Period gives seconds
PERIOD_STATE = "votes:periods"  # hash: <period> -> frontier "T" or "T article:<id>";
#   <period>:fill -> backfill cursor (present while the period's zset is being built)


def period_votes(period: str) -> str:
    """zset: article:<id> -> net votes (as votes:), of the articles after the period's
    frontier in time: (posted in the period, plus those aged out and not yet trimmed)."""
    if period not in PERIODS:
        raise ValueError(f"not a period: {period!r}")
    return f"votes:{period}"


# What every write that changes votes: passes, in this order (the scripts' PERIODS table
# follows keys.PERIODS): each period's zset, then the state hash.
PERIOD_KEYS = (*(period_votes(p) for p in PERIODS), PERIOD_STATE)


# Reading members back: what a reply names, as the store's own code reads it.
def text(value: bytes | str) -> str:
    """A reply's bytes as text; bytes that are not UTF-8 (data written by others) replaced."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def article_ids(members: Iterable[bytes | str]) -> list[int]:
    """The ids of the members that name an article; any other member is skipped, never
    turned into a key (a foreign write)."""
    found = []
    for member in members:
        try:
            found.append(article_id_of(text(member)))
        except ValueError:
            continue
    return found


def member_key(member: str) -> str:
    """`member` if it names an article hash, else "" (guards data written by others)."""
    try:
        return article(article_id_of(member))
    except ValueError:
        return ""


def group_keys(name: str) -> tuple[str, str, str, str]:
    """A group's set, its two rankings and the registry saying whether they are kept: the
    quad each write script takes a group by (group_rank in lua/_lib.lua)."""
    return group(name), group_order(SCORE, name), group_order(TIME, name), GROUP_RANKS
