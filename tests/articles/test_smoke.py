from articles import selectors, services
from articles.types import Order, Vote


def test_post_vote_and_list_round_trip():
    article = services.article_post(
        user_id=1, poster_name="ann", title="Hello", link="https://example.org/"
    )
    services.article_vote(article_id=article.id, user_id=2, direction=Vote.UP)
    page = selectors.article_list(order=Order.SCORE)
    assert [a.id for a in page.items] == [article.id]
    assert page.items[0].votes == 2
