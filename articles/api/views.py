"""The REST API's articles: a thin viewset over the same services and selectors the pages
use. The other collections are in site.py and comments.py; what they share in base.py."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from articles import conf
from articles.api import personal, tokens
from articles.api.base import (
    _READ,
    _WRITE,
    ARTICLE_ID,
    DATE,
    IDEMPOTENCY_KEY,
    LOCATION,
    ORDER,
    PAGE,
    PERIOD,
    REASON,
    ApiViewSet,
    _about,
    _actor,
    _article,
    _errors,
    _page,
    _valid,
    _viewer,
    rides_on_rows,
)
from articles.api.fields import GROUP_NAME_SCHEMA_PATTERN
from articles.api.lean import LeanVoteMixin
from articles.api.personal import ArticleListsMixin
from articles.api.queries import (
    SEARCH_ORDERS,
    GoodQuerySerializer,
    ListQuerySerializer,
    ReasonQuerySerializer,
    SearchQuerySerializer,
    TopQuerySerializer,
)
from articles.api.schema import documented
from articles.api.serializers import (
    ArticleCreateSerializer,
    ArticleEditSerializer,
    ArticleGroupsSerializer,
    ArticlePageSerializer,
    ArticleSerializer,
    GroupsUpdateSerializer,
    SearchPageSerializer,
    VoteSerializer,
    article_url,
    search_page_data,
    vote_value,
)
from articles.errors import ArticleNotFound
from articles.http import guarded
from articles.store import ratelimits, selectors, services
from articles.types import NewPost

# --- articles ------------------------------------------------------------------------------

EDIT_DESCRIPTION = (
    "Staff may change the title, link and text of any article, at any time; the change and "
    "its `reason` go to the public moderation log. An article's poster may change its title "
    "and text while voting is open, unlogged; 403 after voting closes, or for a changed "
    "link. The search index follows the new words and `edited_at` the time. 400 when the "
    "article would be left with neither link nor text; 409 (`duplicate_link`, with "
    "`article_id`) when another article still open for voting has the new link, or "
    "(`article_archived`) when the article is archived (read-only)."
)


class ArticleViewSet(LeanVoteMixin, ArticleListsMixin, ApiViewSet):
    lookup_field = "id"
    lookup_value_regex = r"[0-9]{1,18}"
    folded_limits = {"vote": ("vote",), **personal.ARTICLE_LIMITS}
    guarded_actions = frozenset({"vote"})  # its limits and token check in the vote's script
    action_permissions = {
        "create": [IsAuthenticated],
        "destroy": [IsAuthenticated],
        "vote": [IsAuthenticated],
        "update": [IsAuthenticated],  # staff, or the poster while voting is open
        "partial_update": [IsAuthenticated],
        "groups": [IsAuthenticated],  # staff only: the service decides
        **personal.ARTICLE_PERMISSIONS,
    }

    @documented(
        summary="List articles by score or by time",
        description=_about(
            f"Articles, {conf.DEFAULTS['PER_PAGE']} a page by default, ranked by `order`: "
            "`score` (the front page's ranking: newer articles rank higher, and each net vote, "
            f"up minus down, counts as {conf.DEFAULTS['VOTE_SCORE']} seconds of newness) or "
            "`time` (newest first). Deleted articles are left out; a page past the end is empty."
            + personal.HIDDEN_LEFT_OUT,
            "anyone",
            _READ,
            "400 for an unknown `order` or a bad `page` (`field` names it).",
        ),
        parameters=[ORDER, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400)},
    )
    @rides_on_rows
    def list(self, request: Request) -> Response:
        query = _valid(ListQuerySerializer, request.query_params)
        page = selectors.article_list(
            order=query["order"], page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)

    @documented(
        summary="Post an article (counts the poster's own up-vote)",
        parameters=[IDEMPOTENCY_KEY, LOCATION],
        request=ArticleCreateSerializer,
        responses={201: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415, 422)},
        description=_about(
            "Posts an article: a title, and a link or a text (or both), in any groups that "
            "exist. The poster's own up-vote counts from the start, and voting is open for a "
            "week. Answers 201 with the article, and its API address in `Location`. With an "
            "`Idempotency-Key`, a retry cannot post it twice.",
            "member",
            (*_WRITE, "post"),
            "400 for a missing or bad field (`field` names it); 404 (`group_not_found`) when a "
            "named group does not exist; 409 (`duplicate_link`, with `article_id`) when the "
            "link was already posted and is still open for voting; 422 "
            "(`idempotency_key_reused`) when the key came with another body. The posting limit "
            "is shared with the web pages.",
        ),
    )
    def create(self, request: Request) -> Response:
        data = _valid(ArticleCreateSerializer, request.data)
        article = services.article_submit(
            NewPost.by(_actor(request), data),
            idempotency_key=request.headers.get("Idempotency-Key"),
            limit=lambda: ratelimits.check(request, "post"),
        )
        assert article is not None  # check() raises, never answers False
        response = _article(article, request, status.HTTP_201_CREATED)
        response["Location"] = article_url(article.id, request)
        return response

    @documented(
        summary="One article",
        description=_about(
            "One article: its title, link and text, votes, score, groups, and when its voting "
            "closes.",
            "anyone",
            _READ,
            "404 (`article_not_found`) when there is no such article, or its poster deleted "
            "it; 410 (`article_removed`) when staff removed it, with `removed_at` and "
            "`reason` (as the moderation log says).",
        ),
        parameters=[ARTICLE_ID],
        responses={200: ArticleSerializer, **_errors(404, 410)},
    )
    def retrieve(self, request: Request, id: str) -> Response:
        try:
            article = selectors.article_get(article_id=int(id), user_id=_viewer(request))
        except ArticleNotFound:
            selectors.raise_if_removed(article_id=int(id))
            raise
        return _article(article, request)

    @documented(
        summary="Edit an article (staff, or its poster while voting is open)",
        parameters=[ARTICLE_ID],
        request=ArticleEditSerializer,
        responses={200: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            EDIT_DESCRIPTION + " PUT sends the title and link (the text may be left out: it "
            "stays as it is).",
            "poster",
            _WRITE,
        ),
    )
    def update(self, request: Request, id: str) -> Response:
        return self._edit(request, id, partial=False)

    @documented(
        summary="Edit some of an article's fields (staff, or its poster while voting is open)",
        parameters=[ARTICLE_ID],
        request=ArticleEditSerializer,
        responses={200: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            EDIT_DESCRIPTION + " PATCH sends only the fields to change.", "poster", _WRITE
        ),
    )
    def partial_update(self, request: Request, id: str) -> Response:
        return self._edit(request, id, partial=True)

    def _edit(self, request: Request, id: str, *, partial: bool) -> Response:
        serializer = ArticleEditSerializer(data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        article = services.article_edit(
            article_id=int(id),
            title=data.get("title"),
            link=data.get("link"),
            text=data.get("text"),
            actor=_actor(request),
            reason=data.get("reason", ""),
        )
        return _article(article, request)

    @documented(
        summary="Delete an article (staff, or its poster while voting is open)",
        description=_about(
            "Deletes an article: it leaves every list, group and search. Staff may delete any "
            "article, kept in the public moderation log; deleting someone else's takes a "
            "`reason` (shown there). Its poster may delete their own, with no reason, while its "
            "voting is open. Answers 204, no body.",
            "member",
            _WRITE,
            "400 (field `reason`) for staff deleting someone else's article with no reason, or "
            "one too long; 403 (`not_allowed`) for someone else's article (not staff), or the "
            "poster's own once its voting has closed; 404 (`article_not_found`).",
        ),
        parameters=[ARTICLE_ID, REASON],
        responses={204: None, **_errors(400, 401, 403, 404)},
    )
    def destroy(self, request: Request, id: str) -> Response:
        query = _valid(ReasonQuerySerializer, request.query_params)
        services.article_delete(article_id=int(id), actor=_actor(request), reason=query["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)

    @documented(
        summary="Set your vote: up, down or none (repeating it changes nothing)",
        parameters=[ARTICLE_ID],
        request=VoteSerializer,
        responses={200: ArticleSerializer, **_errors(400, 401, 403, 404, 409, 415)},
        description=_about(
            "Sets your vote on an article: `up`, `down`, or `none` to take it back. Setting the "
            "vote you already have changes nothing, so a retry is safe. Answers the article "
            "with its new counts and score.",
            "member",
            (*_WRITE, "vote"),
            "400 for a `value` other than `up`, `down` or `none`; 404 (`article_not_found`); "
            "409 (`voting_closed`) once the article's one-week voting window is over.",
        ),
    )
    @action(detail=True, methods=["put"])
    def vote(self, request: Request, id: str) -> Response:
        direction = vote_value(request.data)
        article = guarded.vote(request, tokens, article_id=int(id), direction=direction)
        return _article(article, request)

    @documented(
        summary="Staff: add the article to groups and remove it from others, in one step",
        description=_about(
            "Adds the article to the groups named in `add` and removes it from those in "
            "`remove`, in one step; answers the groups it is in afterwards. Kept in the "
            "moderation log with the `reason`.",
            "staff",
            _WRITE,
            "400 for a bad group name, or one both added and removed; 404 "
            "(`article_not_found`, or `group_not_found` for a group to add); 409 "
            "(`article_archived`) when the article is archived.",
        ),
        parameters=[ARTICLE_ID],
        request=GroupsUpdateSerializer,
        responses={200: ArticleGroupsSerializer, **_errors(400, 401, 403, 404, 409, 415)},
    )
    @action(detail=True, methods=["post"])
    def groups(self, request: Request, id: str) -> Response:
        data = _valid(GroupsUpdateSerializer, request.data)
        groups = services.article_groups_update(
            article_id=int(id),
            add=data["add"],
            remove=data["remove"],
            actor=_actor(request),
            reason=data["reason"],
        )
        return Response({"groups": list(groups)})

    @documented(
        summary=f"Good articles (at least {conf.DEFAULTS['GOOD_ARTICLE_VOTES']} up-votes): the "
        f"newest {conf.DEFAULTS['HOME_GOOD_ARTICLES']}, or one day's",
        description=_about(
            f"Good articles: those with at least {conf.DEFAULTS['GOOD_ARTICLE_VOTES']} up-votes "
            "(by default). Without `date`: the newest "
            f"{conf.DEFAULTS['HOME_GOOD_ARTICLES']}, on one page (a later page is empty), a "
            "logged-in caller's hidden articles left out. With `date`: those posted on that "
            "UTC day, page by page.",
            "anyone",
            _READ,
            "400 for a bad `date` (YYYY-MM-DD) or `page` (`field` names it).",
        ),
        parameters=[DATE, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400)},
    )
    @action(detail=False, methods=["get"])
    @rides_on_rows
    def good(self, request: Request) -> Response:
        query = _valid(GoodQuerySerializer, request.query_params)
        if "date" in query:
            page = selectors.good_article_day(
                day=query["date"], page=query["page"], user_id=_viewer(request)
            )
        else:  # the newest good articles are one page; a later one is empty, past the end
            page = selectors.good_article_page(
                page=query["page"], per_page=conf.home_good(), user_id=_viewer(request)
            )
        return _page(page, request)

    @documented(
        summary="Search articles by words",
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "minLength": 1, "maxLength": 400},
                required=True,
                description="Words, all of which must match; `-word` leaves out articles "
                "with that word. At most 8 words. Case, accents and the form of a word "
                "do not matter (`tools` finds `tool`: words are stemmed); very short and "
                "very common words are not indexed.",
            ),
            OpenApiParameter(
                "order",
                str,
                enum=SEARCH_ORDERS,
                default="score",
                description="`votes`: by net votes (up - down); `time` is `newest`, as in "
                "the article lists.",
            ),
            PERIOD,
            OpenApiParameter(
                "group", {"type": "string", "pattern": GROUP_NAME_SCHEMA_PATTERN}, required=False
            ),
            PAGE,
        ],
        responses={200: SearchPageSerializer, **_errors(400)},
        description=_about(
            "Articles whose title or text has every word of `q` (`-word` leaves out those "
            "with it), in one `group` and `period` if given, ranked by `order`. Results are "
            f"cached for a short time ({conf.DEFAULTS['SEARCH_CACHE_SECONDS']} s by default), so "
            "a new article or vote can take that long to show.",
            "anyone",
            _READ,
            "400 (`empty_search`, field `q`) when the query has no word to look for; 400 "
            "(`invalid`, field `q`) when it is longer than 400 characters or names more than 8 "
            "words; 400 for a bad `order`, `period`, `group` or `page` (`field` names it).",
        ),
    )
    @action(detail=False, methods=["get"])
    def search(self, request: Request) -> Response:
        query = _valid(SearchQuerySerializer, request.query_params)
        page = selectors.article_search(
            q=query["q"],
            order=query["order"],
            group=query["group"] or None,
            period=query["period"],
            page=query["page"],
            user_id=_viewer(request),
        )
        return Response(search_page_data(page, request))

    @documented(
        summary="Top articles of the last day, week, month, year or of all time",
        description=_about(
            "Articles ranked by net votes (up-votes minus down-votes), most first: of all "
            "articles (`period=all`, the default), or of those posted in the last day, "
            "week, month or year (those rankings are recomputed at most once a minute). "
            "For the time-decayed ranking of the front page, list articles with "
            "`order=score`." + personal.HIDDEN_LEFT_OUT,
            "anyone",
            _READ,
            "400 for an unknown `period` or a bad `page` (`field` names it).",
        ),
        parameters=[PERIOD, PAGE],
        responses={200: ArticlePageSerializer, **_errors(400)},
    )
    @action(detail=False, methods=["get"])
    @rides_on_rows
    def top(self, request: Request) -> Response:
        query = _valid(TopQuerySerializer, request.query_params)
        page = selectors.top_article_list(
            period=query["period"], page=query["page"], user_id=_viewer(request)
        )
        return _page(page, request)
