"""The page of a site: the articles whose links are on it, newest first (/d/<domain>/)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from articles import validation
from articles.errors import InvalidInput
from articles.store import selectors
from articles.urlcache import url_for
from articles.web import rendering
from articles.web.helpers import html_errors, listing_status, page_param, viewer_id
from articles.web.pagecache import anonymous_cache
from articles.web.sessionusers import session_user


@require_GET
@session_user
@anonymous_cache
@html_errors
def domain_detail(request: HttpRequest, domain: str) -> HttpResponse:
    """A site's articles, 25 a page, as every listing. Another spelling of its name (upper
    case, Unicode, "www.") redirects to the one the index uses; a name no link can have
    is a 404, and so is a site nothing links to (an address for every name, but a page
    only for the sites the store knows)."""
    try:
        name = validation.clean_domain(domain)
    except InvalidInput:
        raise Http404(gettext("No such site.")) from None
    if name != domain:
        query = f"?{urlencode(request.GET)}" if request.GET else ""
        return HttpResponsePermanentRedirect(url_for("articles:domain-detail", name) + query)
    page = selectors.domain_article_list(
        domain=name, page=page_param(request), user_id=viewer_id(request)
    )
    context = {"domain": name, "label": validation.domain_label(name), "page": page}
    status = 404 if not page.count else listing_status(page)
    return rendering.render(request, "articles/domain_detail.html", context, status=status)
