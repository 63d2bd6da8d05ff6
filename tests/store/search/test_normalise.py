"""The words of articles and queries (articles/store/search.py): pure, no Redis."""

import pytest

from articles.store import keys, search


def test_case_folding_and_accents_make_one_word():
    assert search.tokens("Café CAFÉ cafe Straße STRASSE ﬁle") == [
        "cafe",
        "cafe",
        "cafe",
        "strasse",
        "strasse",
        "file",
    ]


def test_stop_words_and_short_words_are_left_out():
    assert search.tokens("The art of a Redis in 2 days") == ["art", "redis", "days"]


def test_long_words_are_cut_to_the_maximum():
    (word,) = search.tokens("x" * 100)
    assert word == "x" * search.MAX_WORD


def test_punctuation_and_underscores_separate_words():
    assert search.tokens("redis-py's foo_bar, {x}:y*") == ["redis", "py", "foo", "bar"]


def test_article_words_are_title_text_and_link_host_sorted_once():
    words = search.article_words("Redis streams", "Streams in redis", "https://www.antirez.com/a/b")
    assert words == ["antirez", "redis", "streams"]


def test_a_bad_link_gives_no_host_words():
    assert search.host_words("http://[::1") == []


def test_other_scripts_are_words_too():
    assert search.tokens("Привет мир 東京") == ["привет", "мир", "東京"]


@pytest.mark.parametrize("text", ["", "   ", "*", ":", "{}", "\x00\x07\n", "the of and", "a b c"])
def test_no_words_in_punctuation_control_characters_or_stop_words(text):
    assert search.tokens(text) == []


def test_every_word_makes_a_valid_key():
    fraktur = "\U0001d518\U0001d52b\U0001d526"
    for word in search.tokens(f"Ünïcödé ǅemal ﬃ x²³ ١٢٣ naïve {fraktur} " + "é" * 50):
        assert keys.postings(word) == f"postings:{word}"


@pytest.mark.parametrize("word", ["", "a b", "a:b", "*", "{x}", "a_b", "x" * 33, None])
def test_postings_refuses_what_is_not_a_search_word(word):
    with pytest.raises(ValueError):
        keys.postings(word)


def test_query_ands_words_and_excludes_minus_words():
    query = search.parse_query("Redis  -Python streams -the")
    assert query.include == ("redis", "streams")
    assert query.exclude == ("python",)
    assert query.canonical == "redis streams -python"


def test_a_word_both_wanted_and_excluded_is_wanted():
    assert search.parse_query("redis -redis").exclude == ()


def test_a_lone_minus_is_not_an_exclusion():
    assert search.parse_query("- redis").include == ("redis",)


@pytest.mark.parametrize("q", ["", "   ", "the of", "*", "{}", ":", "\x00"])
def test_nothing_to_look_for_is_an_empty_query(q):
    with pytest.raises(search.QueryError) as caught:
        search.parse_query(q)
    assert caught.value.empty


def test_only_excluded_words_is_an_empty_query_that_says_so():
    with pytest.raises(search.QueryError, match="not only words to leave out") as caught:
        search.parse_query("-redis")
    assert caught.value.empty


def test_too_long_and_too_many_words_are_refused():
    with pytest.raises(search.QueryError, match="400 characters") as caught:
        search.parse_query("x" * 401)
    assert not caught.value.empty
    search.parse_query("redis " + " " * 390)  # 400 exactly is fine
    with pytest.raises(search.QueryError, match="at most 8 words"):
        search.parse_query(" ".join(f"w{n}x" for n in range(9)))


def test_highlight_marks_the_title_words_found_in_any_spelling():
    pieces = search.highlight("Café <b> and CAFES, café!", ("cafe",))
    assert pieces == [("Café", True), (" <b> and CAFES, ", False), ("café", True), ("!", False)]
