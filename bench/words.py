"""Words for the benchmark's articles: titles, texts and link hosts that search can be
measured on, with the spread of real ones (a few words in many articles, most in few).

Words are drawn with a Zipf-Mandelbrot law, P(rank r) proportional to 1 / (r + 30), over
20,000 words: the 364 most frequent are real words of technology news (in rank order), the
rest generated names (projects, products, people), the long tail every news site has.
A title holds 4-9 of them joined by a few stop words; a quarter of the articles also have
a text of 2-4 sentences. Hosts are drawn the same way from 60 real news and blog hosts
and 1,000 generated ones. Everything is deterministic (one seed per article).
"""

from __future__ import annotations

import itertools
import random
from functools import cache

_COMMON = """
new data open source code rust python linux google apple software release web ai model
security browser language performance database design startup learning guide api cloud
system memory engineering programming study game compiler server study privacy network
javascript tool version chrome microsoft windows kernel internet developer research
hardware framework phone mobile app intel amd chip gpu cpu storage file history music
video image search email company business market money bank crypto bitcoin energy
battery car electric space nasa science physics math algorithm computer book paper
world city health medical brain climate water government law court police election war
rocket satellite moon mars planet star galaxy telescope ocean fish bird dog cat tree
building house home office remote work job hiring salary interview manager team
culture product launch price free cheap expensive fast slow simple hard small big
framework library package manager container docker kubernetes cluster deploy cloud
terminal editor vim emacs shell bash git github commit branch merge review test bug
debug crash error exception log metric trace monitor alert outage incident postmortem
sql postgres mysql sqlite redis mongodb cache queue stream event kafka message protocol
http tcp dns tls certificate encryption password key token auth login account user
privacy tracking ads advertising twitter facebook meta amazon netflix tesla spacex
openai llm gpt chatbot transformer neural training inference dataset benchmark
robot drone camera sensor display screen keyboard mouse laptop desktop tablet watch
printer router wifi bluetooth usb cable power solar wind nuclear fusion reactor
oil gas coal carbon emission warming weather storm flood fire earthquake volcano
vaccine virus disease cancer drug hospital doctor patient sleep diet exercise food
coffee beer wine restaurant farm farming plant seed soil forest river lake mountain
travel flight airport airline train railway bus bike road traffic map navigation
school university student teacher education course lecture tutorial documentation
writing blog post essay story novel author publisher magazine newspaper journalism
art design font color typography icon logo photo film movie television radio podcast
music guitar piano song album concert festival sport football soccer tennis chess
history ancient medieval empire king queen war army navy castle museum archive
economy inflation interest rate tax budget debt trade tariff export import stock
investor venture capital funding acquisition ipo layoff union strike wage pension
"""
COMMON = list(dict.fromkeys(_COMMON.split()))  # in rank order

_HOSTS = """
github.com nytimes.com arstechnica.com theverge.com bbc.co.uk wired.com medium.com
theguardian.com bloomberg.com reuters.com techcrunch.com youtube.com wikipedia.org
arxiv.org nature.com economist.com ft.com wsj.com washingtonpost.com theatlantic.com
newyorker.com quantamagazine.org lwn.net phoronix.com anandtech.com tomshardware.com
engadget.com zdnet.com cnbc.com apnews.com npr.org vox.com axios.com substack.com
gitlab.com stackoverflow.blog smithsonianmag.com scientificamerican.com newscientist.com
spectrum.ieee.org acm.org mit.edu stanford.edu berkeley.edu harvard.edu ox.ac.uk
cam.ac.uk blog.cloudflare.com aws.amazon.com cloud.google.com devblogs.microsoft.com
mozilla.org rust-lang.org python.org kernel.org postgresql.org redis.io
"""
HOSTS = _HOSTS.split()

_CLUSTERS = ["br", "ch", "cr", "dr", "fl", "gr", "kl", "pl", "pr", "sh", "st", "tr"]
_ONSETS = [*"bcdfghjklmnprstvwz", *_CLUSTERS]
_VOWELS = [*"aeiouy", "ai", "ea", "io", "ou"]
_CODAS = ["", "", "n", "r", "s", "x", "l", "k", "m", "t", "nd", "st"]
_JOINERS = ["the", "for", "with", "and", "in", "of", "on", "to", "how", "why", "a"]
VOCABULARY_SIZE = 20_000
GENERATED_HOSTS = 1_000


def _names(seed: int, count: int, taken: set[str]) -> list[str]:
    rng = random.Random(seed)
    names: list[str] = []
    while len(names) < count:
        syllables = rng.randint(2, 3)
        name = "".join(
            rng.choice(_ONSETS) + rng.choice(_VOWELS) + (rng.choice(_CODAS) if i else "")
            for i in range(syllables)
        )
        if 4 <= len(name) <= 12 and name not in taken:
            taken.add(name)
            names.append(name)
    return names


def _ranked(seed: int, first: list[str], size: int) -> list[str]:
    return first + _names(seed, size - len(first), set(first))


@cache
def vocabulary() -> tuple[list[str], list[float]]:
    """The words in rank order and their cumulative weights."""
    ranked = _ranked(11, COMMON, VOCABULARY_SIZE)
    return ranked, list(itertools.accumulate(1 / (r + 30) for r in range(1, len(ranked) + 1)))


@cache
def hosts() -> tuple[list[str], list[float]]:
    generated = [
        f"{name}.{tld}"
        for name, tld in zip(
            _names(12, GENERATED_HOSTS, set(COMMON)),
            itertools.cycle(["com", "io", "net", "org"]),
            strict=False,
        )
    ]
    ranked = [*HOSTS, *generated]
    return ranked, list(itertools.accumulate(1 / (r + 5) for r in range(1, len(ranked) + 1)))


def _phrase(rng: random.Random, count: int) -> str:
    ranked, weights = vocabulary()
    words = rng.choices(ranked, cum_weights=weights, k=count)
    out = []
    for i, word in enumerate(words):
        if i and rng.random() < 0.3:
            out.append(rng.choice(_JOINERS))
        out.append(word)
    return " ".join(out)


def title(rng: random.Random) -> str:
    text = _phrase(rng, rng.randint(4, 9))
    return text[0].upper() + text[1:]


def text(rng: random.Random) -> str:
    """A quarter of the articles have a text; the others an empty one."""
    if rng.random() >= 0.25:
        return ""
    return sentences(rng)


def sentences(rng: random.Random) -> str:
    """2-4 sentences of 6-14 words: an article's text, a comment."""
    made = [_phrase(rng, rng.randint(6, 14)) for _ in range(rng.randint(2, 4))]
    return " ".join(s[0].upper() + s[1:] + "." for s in made)


def link(rng: random.Random, article_id: int) -> str:
    ranked, weights = hosts()
    host = rng.choices(ranked, cum_weights=weights, k=1)[0]
    return f"https://{host}/{article_id}/{'-'.join(_phrase(rng, 3).split()[:3])}"
