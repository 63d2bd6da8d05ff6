"""Django's LocaleMiddleware without its work on language prefixes in the path where the
URLconf has none (no i18n_patterns, as votesite's): it looked for a language in the path
twice a request, about a quarter of a bare request, to find none. The language a request
asks for (its cookie and Accept-Language) is worked out once per pair of values and kept in
the process cache "languages" (content: keyed by both values, emptied by any settings change;
1,024 pairs, values over 256 characters not kept)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.http import HttpRequest, HttpResponse
from django.middleware.locale import LocaleMiddleware as DjangoLocaleMiddleware
from django.utils import translation
from django.utils.cache import patch_vary_headers

from articles.caches import Cache, Kind
from votesite.headers import Entry, checked, store_of

# Content-addressed: the choice is made of the cookie, the header and the settings (a
# settings change empties every cache). Both values are the client's: longer ones are
# worked out each time rather than kept.
MAX_CHOICES = 1024
_LONGEST = 256
_chosen: Cache[tuple[str | None, str], tuple[str, str]] = Cache(
    "languages", Kind.CONTENT, entries=MAX_CHOICES
)


def _prefixed(request: HttpRequest) -> bool:
    """Whether the request's URLconf uses i18n_patterns (cached by Django per URLconf)."""
    urlconf = getattr(request, "urlconf", settings.ROOT_URLCONF)
    used: bool = is_language_prefix_patterns_used(urlconf)[0]
    return used


def _activate(request: HttpRequest) -> None:
    """Activate the language Django's get_language_from_request picks (cookie,
    Accept-Language, LANGUAGE_CODE) and note it as request.LANGUAGE_CODE."""
    cookie = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
    accept = request.META.get("HTTP_ACCEPT_LANGUAGE", "")
    key = (cookie, accept)
    found = _chosen.get(key)
    if found is None:
        language = translation.get_language_from_request(request, check_path=False)
        translation.activate(language)
        found = (language, translation.get_language())
        if len(accept) <= _LONGEST and (cookie is None or len(cookie) <= _LONGEST):
            _chosen.put(key, found)
    else:
        translation.activate(found[0])
    request.LANGUAGE_CODE = found[1]


class LocaleMiddleware(DjangoLocaleMiddleware):
    """The same language (cookie, Accept-Language, LANGUAGE_CODE), the same Vary and
    Content-Language headers; under a URLconf with i18n_patterns, Django's own steps.
    Called directly, without MiddlewareMixin's dispatch (synchronous only: Django
    adapts it under ASGI): __call__ is its one path, and process_request and
    process_response stay Django's, which answer the same."""

    async_capable = False

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _prefixed(request):
            response = super().process_request(request) or self.get_response(request)
            return super().process_response(request, response)  # type: ignore[no-any-return]
        _activate(request)
        response = self.get_response(request)
        return self._say(response)

    @staticmethod
    def _say(response: Any) -> Any:
        """Vary: Accept-Language and the Content-Language of the language active now (a
        view may have changed it), as Django's process_response adds them, written straight
        into Django's header store (votesite.headers), each language's header checked once."""
        language = translation.get_language()
        store = store_of(response)
        said = _said(language) if store is not None else None
        if store is None or said is None:
            if response.has_header("Vary"):
                patch_vary_headers(response, ("Accept-Language",))
            else:
                response.headers["Vary"] = "Accept-Language"
            response.headers.setdefault("Content-Language", language)
            return response
        if "vary" in store:
            patch_vary_headers(response, ("Accept-Language",))
        else:
            store.setdefault(*_VARY)
        store.setdefault(*said)
        return response


_VARY = checked("Vary", "Accept-Language")

# Each language's Content-Language header as the header store holds it. A view may activate
# a language code the client chose: past this many the header is set the checking way.
_MAX_SAID = 64
_saying: dict[str, Entry] = {}


def _said(language: str) -> Entry | None:
    said = _saying.get(language)
    if said is None and len(_saying) < _MAX_SAID and type(language) is str:
        try:
            said = _saying[language] = checked("Content-Language", language)
        except Exception:  # Django raises it again, the checking way
            return None
    return said
