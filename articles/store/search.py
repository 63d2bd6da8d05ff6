"""Search words: how titles, texts, links and queries become the words of the index.

Pure functions (no I/O): what is indexed and what is looked for go through the same
normalisation, so a word found on the page is the word searched. A word is folded, then
reduced to its stem by the site's Snowball stemmer (ARTICLES_SEARCH_LANGUAGE: "tools"
and "tool" are one word, and one set). The words are the only user input that names
keys (postings:<word>, in keys.py), so they hold letters and digits only: no `*`, `:`, `{`,
space or control character ever reaches a key name.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import urlsplit

import snowballstemmer
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext

from articles import conf

MIN_WORD = 2  # shorter words ("a", "x") match too much to be worth a set each
MAX_WORD = 32  # longer "words" are hashes, ids and noise; cut, not dropped
MAX_TERMS = 8  # words a query may name, excluded ones included
MAX_QUERY = 400  # characters of a query

# A small English list: the words nearly every title holds (Redis in Action's STOPWORDS,
# trimmed to those that are whole words after normalisation).
STOP_WORDS = frozenset(
    [
        "able",
        "about",
        "across",
        "after",
        "all",
        "almost",
        "also",
        "am",
        "among",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "but",
        "by",
        "can",
        "could",
        "dear",
        "did",
        "do",
        "does",
        "either",
        "else",
        "ever",
        "every",
        "for",
        "from",
        "get",
        "got",
        "had",
        "has",
        "have",
        "he",
        "her",
        "hers",
        "him",
        "his",
        "how",
        "however",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "least",
        "let",
        "like",
        "likely",
        "may",
        "me",
        "might",
        "most",
        "must",
        "my",
        "neither",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "often",
        "on",
        "only",
        "or",
        "other",
        "our",
        "own",
        "rather",
        "said",
        "say",
        "says",
        "she",
        "should",
        "since",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "tis",
        "to",
        "too",
        "twas",
        "us",
        "wants",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "yet",
        "you",
        "your",
    ]
)

# Letters and digits of any script; "_" is \w but joins no word here.
_WORD = re.compile(r"[^\W_]+")
# Host labels that say nothing about an article.
_HOST_NOISE = frozenset({"www", "com", "org", "net", "io", "html", "http", "https"})


def fold(text: str) -> str:
    """Case-folded (ß -> ss), compatibility-decomposed (ﬁ -> fi), accents removed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def surface_tokens(text: str) -> list[str]:
    """The folded words of `text` in order, stop words and short words left out, long
    words cut to MAX_WORD: the words as typed (the index before stemming)."""
    found = []
    for raw in _WORD.findall(fold(text)):
        word = raw[:MAX_WORD]
        if len(word) >= MIN_WORD and word not in STOP_WORDS:
            found.append(word)
    return found


@lru_cache(maxsize=4)
def _stemmer(language: str) -> snowballstemmer.stemmer:
    try:
        return snowballstemmer.stemmer(language)
    except KeyError:
        raise ImproperlyConfigured(
            f"ARTICLES_SEARCH_LANGUAGE {language!r} is none of snowballstemmer.algorithms()"
        ) from None


# snowballstemmer is pure Python, ~10-80 us a word (PyStemmer, its C twin, is used when
# installed); a site's words repeat, so most are stemmed once. 16,384 words: ~3 MB a process.
@lru_cache(maxsize=16_384)
def _stem(word: str, language: str) -> str:
    stem = str(_stemmer(language).stemWord(word))
    # A stem is shorter or as long, but it must stay a key's word (keys.postings) and not
    # shrink below what is indexed at all.
    return stem if len(stem) >= MIN_WORD and _WORD.fullmatch(stem) else word


def stem(word: str) -> str:
    """The stem of a folded word in the site's language (itself with no language)."""
    language = conf.search_language()
    return _stem(word, language) if language else word


def tokens(text: str) -> list[str]:
    """The indexed words of `text` in order: surface_tokens, each reduced to its stem."""
    return [stem(word) for word in surface_tokens(text)]


def host_words(link: str) -> list[str]:
    """The words of a link's host (news.ycombinator.com -> news, ycombinator)."""
    try:
        host = urlsplit(link).hostname or ""
    except ValueError:
        return []
    return [w for w in tokens(host.replace(".", " ")) if w not in _HOST_NOISE]


def article_words(title: str, text: str = "", link: str = "") -> list[str]:
    """Every word an article is found by, sorted and without repeats."""
    return sorted({*tokens(title), *tokens(text), *host_words(link)})


def comment_words(text: str, cap: int | None = None) -> list[str]:
    """The words a comment is found by: its first `cap` distinct words in the order
    written (ARTICLES_SEARCH_COMMENT_WORDS; 0: none), sorted. A comment's opening words
    say what it is about; the cap bounds the index (~30 B a word a comment)."""
    cap = conf.search_comment_words() if cap is None else cap
    found: dict[str, None] = {}
    if cap > 0:
        for word in tokens(text):
            found.setdefault(word)
            if len(found) >= cap:
                break
    return sorted(found)


class QueryError(ValueError):
    """A query that cannot be run; the message says why, for the person who typed it."""

    def __init__(self, message: str, *, empty: bool = False) -> None:
        super().__init__(message)
        self.empty = empty  # nothing to look for: a message, not an error


@dataclass(frozen=True, slots=True)
class Query:
    include: tuple[str, ...]  # every one must match (sorted, no repeats)
    exclude: tuple[str, ...]  # none may match (sorted, no repeats, none also included)
    # a word as typed for each stem it differs from ("tool" -> "tools"): an index built
    # before stemming (or in another language) holds the typed word (see search.lua)
    typed: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def canonical(self) -> str:
        """One spelling per meaning: the cache key's content."""
        return " ".join([*self.include, *(f"-{w}" for w in self.exclude)])


def parse_query(q: str) -> Query:
    """Words ANDed, `-word` excluded. Raises QueryError: too long, too many words, or
    (with `empty` set) nothing left to look for."""
    if len(q) > MAX_QUERY:
        raise QueryError(gettext("A search is at most %(max)d characters.") % {"max": MAX_QUERY})
    include: set[str] = set()
    exclude: set[str] = set()
    typed: dict[str, str] = {}
    for part in q.split():
        negated = part.startswith("-") and len(part) > 1
        for word in surface_tokens(part[1:] if negated else part):
            stemmed = stem(word)
            (exclude if negated else include).add(stemmed)
            if stemmed != word:
                typed.setdefault(stemmed, word)
    exclude -= include  # "a -a" looks for a: the plain word wins
    if len(include) + len(exclude) > MAX_TERMS:
        raise QueryError(gettext("A search names at most %(max)d words.") % {"max": MAX_TERMS})
    if not include:
        message = (
            gettext("Say what to look for: a word to find, not only words to leave out.")
            if exclude
            else gettext(
                "Type a word to look for (very short and very common words are not indexed)."
            )
        )
        raise QueryError(message, empty=True)
    return Query(tuple(sorted(include)), tuple(sorted(exclude)), typed)


def excerpt(text: str, words: tuple[str, ...] | frozenset[str], width: int = 240) -> str:
    """About `width` characters of `text` (spaces collapsed) around its first word whose
    normalised form is among `words`: what a comment search shows of each comment."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    wanted, at = set(words), 0
    for match in _WORD.finditer(flat):
        normal = tokens(match.group())
        if normal and normal[0] in wanted:
            at = match.start()
            break
    start = max(0, min(at - width // 4, len(flat) - width))
    if start:
        start = flat.find(" ", start) + 1 or start  # begin at a word
    end = start + width
    if end < len(flat):
        end = flat.rfind(" ", start, end) if " " in flat[start:end] else end
    return ("… " if start else "") + flat[start:end] + (" …" if end < len(flat) else "")


def highlight(title: str, words: tuple[str, ...] | frozenset[str]) -> list[tuple[str, bool]]:
    """`title` cut into (piece, matched) pieces: matched pieces are the words of the
    title whose normalised form is among `words`. Escaping is the caller's (templates)."""
    wanted = set(words)
    pieces: list[tuple[str, bool]] = []
    last = 0
    for match in re.finditer(r"[^\W_]+", title):
        normal = tokens(match.group())
        if normal and normal[0] in wanted:
            if match.start() > last:
                pieces.append((title[last : match.start()], False))
            pieces.append((match.group(), True))
            last = match.end()
    if last < len(title):
        pieces.append((title[last:], False))
    return pieces
