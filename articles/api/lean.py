"""The token vote without DRF's per-request machinery: a PUT of {"value": ...} as JSON by
an API token, asking for JSON. DRF's way (a Request wrapping the request, its negotiation,
authenticators, parsers, permission and throttle classes) is most of such a vote's time in
Python, and does nothing there that the vote needs: the token's user is kept (api.tokens;
a token not kept yet is read and kept here, as DRF's authentication would), its epoch and
the rate limits are read in the vote's script (http.guarded), and the answer is the
article as JSON. A token not kept is no rarity: each process keeps its own entries, for
ARTICLES_TOKEN_CACHE_SECONDS, so a client voting less often than that is read each time.

Any other request, and any vote whose answer is an error, is DRF's: a request that is not
plainly such a vote goes through DRF unchanged; an error met on the way is answered by
the view's own handle_exception and finalize_response, as if DRF had met it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response

from articles.api import tokens
from articles.api.base import JSON_MEDIA_TYPE, PLAIN_ACCEPT, _api_actions
from articles.api.renderers import FastJSONRenderer
from articles.api.serializers import article_data, plain_vote
from articles.http import guarded
from articles.store import ratelimits
from articles.types import Vote

if TYPE_CHECKING:
    from rest_framework.views import APIView as _View
else:
    _View = object

# A vote's body is {"value": "none"} give or take spaces: anything longer is DRF's to read.
_BODY_MAX = 256


class LeanVoteMixin(_View):
    """On an API viewset whose `vote` action is guarded (api.base.ApiMixin): its plain
    token votes answered without DRF's machinery, every other request through it."""

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        plain = _plain_vote(self, request)
        if plain is None:
            return super().dispatch(request, *args, **kwargs)
        return _vote(self, request, args, kwargs, plain)


def _plain_vote(view: Any, request: HttpRequest) -> tuple[Any, ...] | None:
    """(renderer, user, token, the token unchecked or None, the vote) of a plain token vote;
    None for any other request. Each test stands for a step of DRF's that would answer
    the same."""
    meta = request.META
    if (
        request.method != "PUT"
        or getattr(view, "action_map", None) != {"put": "vote"}
        or meta.get("QUERY_STRING")  # ?format=
        or meta.get("HTTP_ACCEPT") not in PLAIN_ACCEPT
        or meta.get("CONTENT_TYPE") != JSON_MEDIA_TYPE  # no charset: the settings' (DRF's too)
        or not _drf_steps_idle(view)
    ):
        return None
    renderer = view.get_renderers()[0]
    if type(renderer) is not FastJSONRenderer:
        return None
    key = tokens.token_key(meta.get("HTTP_AUTHORIZATION"))
    found = tokens.unchecked_credentials(key) if key else None
    if found is None:  # no token, or one refused: DRF's way answers it
        return None
    vote = _vote_in(request, meta.get("CONTENT_LENGTH"))
    return None if vote is None else (renderer, *found, vote)


def _drf_steps_idle(view: Any) -> bool:
    """The steps the lean vote leaves out do nothing for this view and host: no throttle
    or versioning configured, DRF's negotiation, the kept-token authentication first,
    and the view's own guarded vote."""
    return (
        not view.throttle_classes
        and view.versioning_class is None
        and view.content_negotiation_class is DefaultContentNegotiation
        and view.authentication_classes[0] is tokens.CachedTokenAuthentication
        and "vote" in view.guarded_actions
    )


def _vote_in(request: HttpRequest, length: Any) -> Vote | None:
    """The vote of a body that is exactly {"value": "up" | "down" | "none"}, read as DRF's
    JSONParser and VoteSerializer read it; None for any other body."""
    if not (isinstance(length, str) and length.isdigit() and 0 < int(length) <= _BODY_MAX):
        return None
    try:
        text = request.body.decode(request.encoding or settings.DEFAULT_CHARSET)
        data = json.loads(text, parse_constant=_refuse)
    except ValueError:  # UnicodeDecodeError, JSONDecodeError: DRF's 400
        return None
    if type(data) is not dict or len(data) != 1:
        return None
    return plain_vote(data)


def _refuse(constant: str) -> Any:
    raise ValueError(constant)  # NaN, Infinity: DRF's strict JSON refuses them


def _vote(view: Any, request: Any, args: Any, kwargs: Any, plain: tuple[Any, ...]) -> Any:
    """DRF's dispatch of the vote, its steps that do nothing here left out."""
    renderer, user, token, kept, vote = plain
    view.args, view.kwargs, view.format_kwarg = args, kwargs, None
    view.action = "vote"
    view.request = request
    view.headers = view.default_response_headers
    request.accepted_renderer, request.accepted_media_type = renderer, JSON_MEDIA_TYPE
    request.user, request.auth = user, token  # as DRF's Request sets them
    if kept is not None:  # None: just read from the database, nothing to check
        tokens.mark_unchecked(request, kept)
    try:
        ratelimits.defer(request, *_api_actions(request), *view.folded_limits["vote"])
        article = guarded.vote(request, tokens, article_id=int(kwargs["id"]), direction=vote)
        response = Response(article_data(article, request))
    except Exception as exc:
        return _drf_answer(view, request, args, kwargs, exc)
    view.response = view.finalize_response(request, response, *args, **kwargs)
    return view.response


def _drf_answer(view: Any, request: Any, args: Any, kwargs: Any, exc: Exception) -> Any:
    """The answer DRF's dispatch gives when its handler raises `exc`: from a Request of
    its own, carrying what DRF's steps would have set on it."""
    drf = view.initialize_request(request, *args, **kwargs)
    drf.accepted_renderer = request.accepted_renderer
    drf.accepted_media_type = request.accepted_media_type
    drf.user, drf.auth = request.user, getattr(request, "auth", None)
    view.request = drf
    response = view.handle_exception(exc)
    view.response = view.finalize_response(drf, response, *args, **kwargs)
    return view.response
