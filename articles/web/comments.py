"""HTML views of comments: the permalink pages, the forms (post, vote, edit, delete, staff
removal) and the site's newest comments. Thin, like views.py: each validates, calls one
service or selector, renders or redirects. The thread under an article is read by
views.article_detail through thread_context()."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from articles.errors import (
    CommentingClosed,
    EditWindowClosed,
    IdempotencyKeyReused,
    InvalidInput,
    NotAllowed,
    RateLimited,
)
from articles.http import loginpage
from articles.http.addresses import user_pk
from articles.http.loginpage import LOGIN_URL
from articles.http.responses import wants_json
from articles.store import clock, ratelimits, selectors, services
from articles.types import Actor, Comment, CommentOrder, ThreadPage
from articles.web import rendering
from articles.web.forms import CommentEditForm, CommentForm, CommentRemoveForm, VoteForm
from articles.web.helpers import (
    form_refused,
    form_response,
    form_status,
    html_errors,
    listing_status,
    login_first,
    page_param,
    safe_next,
    staff_required,
    viewer_id,
)
from articles.web.pagecache import anonymous_cache
from articles.web.sessionusers import session_user

# --- reading ---------------------------------------------------------------------------


@dataclass(slots=True)
class Node:
    """A comment with the replies shown under it on this page."""

    comment: Comment
    children: list[Node] = field(default_factory=list)


def tree(items: list[Comment]) -> list[Node]:
    """The page's comments (depth-first, replies after their parent) as nested nodes: a
    comment whose parent is not on the page starts a tree of its own."""
    nodes: dict[int, Node] = {}
    roots: list[Node] = []
    for comment in items:
        node = nodes[comment.id] = Node(comment)
        parent = nodes.get(comment.parent_id) if comment.parent_id is not None else None
        (parent.children if parent is not None else roots).append(node)
    return roots


def sort_param(request: HttpRequest) -> CommentOrder:
    raw = request.GET.get("sort", CommentOrder.BEST.value)
    try:
        return CommentOrder(raw)
    except ValueError:
        raise InvalidInput("sort", gettext("Sort must be 'best' or 'new'.")) from None


def thread_context(thread: ThreadPage) -> dict[str, Any]:
    """What _thread.html needs besides the thread: its nested comments and empty forms."""
    focus = thread.focus
    items = thread.items if focus is None else [c for c in thread.items if c.id != focus.id]
    return {
        "thread": thread,
        "tree": tree(items),
        # The permalink page shows its comment on its own, its replies below the form.
        "focus_node": Node(focus) if focus is not None else None,
        "comment_form": CommentForm(initial={"parent": focus.id} if focus else None),
        "reply_form": CommentForm(auto_id="reply_%s"),
    }


@require_GET
@session_user
@anonymous_cache
@html_errors
def comment_detail(request: HttpRequest, article_id: int, comment_id: int) -> HttpResponse:
    """/a/<id>/c/<cid>/: one comment, its replies (paged like the article's top level),
    a link up to its context, and the reply form."""
    thread = selectors.comment_thread(
        article_id=article_id,
        order=sort_param(request),
        page=page_param(request),
        user_id=viewer_id(request),
        focus_id=comment_id,
    )
    focus = thread.focus
    if focus is not None and focus.article_id != article_id:
        return redirect("articles:comment-detail", focus.article_id, focus.id, permanent=True)
    article = thread.article or selectors.article_get(article_id=article_id)
    context = {"article": article, **thread_context(thread)}
    return rendering.render(
        request, "articles/comment_detail.html", context, status=listing_status(thread)
    )


@require_GET
@html_errors
def comment_link(request: HttpRequest, comment_id: int) -> HttpResponse:
    """/c/<cid>/: a short address of a comment, sent on to its permalink."""
    comment = selectors.comment_get(comment_id=comment_id)
    return redirect("articles:comment-detail", comment.article_id, comment.id)


@require_GET
@session_user
@anonymous_cache
@html_errors
def recent_comments(request: HttpRequest) -> HttpResponse:
    """/comments/: every article's comments, newest first."""
    page = selectors.recent_comments(page=page_param(request), user_id=viewer_id(request))
    return rendering.render(
        request, "articles/comments.html", {"page": page}, status=listing_status(page)
    )


# --- writing ---------------------------------------------------------------------------


@require_POST
@session_user
@html_errors
def comment_post(request: HttpRequest, article_id: int) -> HttpResponse:
    """A comment on the article, or a reply (`parent`). Refused, the form comes back with
    what was typed and why: 400 (text, depth), 403 (closed) or 429 (too many)."""
    back = reverse("articles:article-detail", args=[article_id]) + "#comments"
    if not request.user.is_authenticated:
        return loginpage.redirect(back, request)
    form = CommentForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            comment = services.comment_submit(
                {
                    "article_id": article_id,
                    "user_id": user_pk(request),
                    "author_name": request.user.get_username(),
                    "text": data["text"],
                    "parent_id": data["parent"],
                },
                idempotency_key=data["idempotency_key"],
                limit=lambda: ratelimits.check(request, "comment"),
            )
        except InvalidInput as exc:
            form.add_store_error(exc)
        except (RateLimited, CommentingClosed) as exc:
            form_refused(form, exc)
        except IdempotencyKeyReused:
            # This form was sent before with another text (back, changed, sent again):
            # sent once more, with a key of its own, it is a comment of its own.
            form.renew_key()
            form.add_error(
                None,
                gettext(
                    "This form was already sent with another text: send it again to post this one."
                ),
            )
        else:
            if comment is not None:  # None: the limit refused it (ratelimits.check raises instead)
                messages.success(request, gettext("Your comment is posted."))
                return redirect(_shown_at(request, comment))
    return _form_page(request, article_id, form)


def _parent_of(form: CommentForm) -> int | None:
    """The comment a refused form answers, as sent (a store error on `parent` takes it out
    of cleaned_data)."""
    raw = form.data.get("parent") or ""
    return int(raw) if raw.isdigit() and len(raw) <= 18 else None


@require_POST
@session_user
@html_errors
def comment_vote(request: HttpRequest, comment_id: int) -> HttpResponse:
    """Up, down or withdraw, as on articles; back to the comment (JSON for the script)."""
    back = safe_next(request, reverse("articles:comment-link", args=[comment_id]))
    direction = request.POST.get("direction", "")
    if direction in ("up", "down"):  # asked for logged out: offered once logged in
        offer = loginpage.comment_vote_page(comment_id, direction, back)
        if (login := login_first(request, offer)) is not None:
            return login
    elif (login := login_first(request, back)) is not None:
        return login
    form = VoteForm(request.POST)
    if not form.is_valid():
        raise InvalidInput("direction", gettext("A vote is up, down or none."))
    ratelimits.check(request, "vote")
    comment = services.comment_vote(comment_id=comment_id, user_id=user_pk(request), vote=form.vote)
    if wants_json(request):
        return JsonResponse(
            {
                "id": comment.id,
                "votes": comment.votes,
                "downvotes": comment.downvotes,
                "net": comment.points,
                "my_vote": comment.my_vote.label if comment.my_vote else "none",
            }
        )
    return redirect(f"{back.split('#')[0]}#c{comment.id}")


@require_GET
@html_errors
def comment_vote_offer(request: HttpRequest, comment_id: int) -> HttpResponse:
    """The comment vote asked for while logged out (`direction`), offered as a form once
    logged in, then back to the comment (`next`). A GET casts nothing: the vote is the
    form's POST, CSRF-checked. Logged out, the login page comes first."""
    back = safe_next(request, reverse("articles:comment-link", args=[comment_id]))
    direction = request.GET.get("direction", "")
    if direction not in ("up", "down"):
        raise InvalidInput("direction", gettext("A vote is up or down."))
    if not request.user.is_authenticated:
        return loginpage.redirect(request.get_full_path(), request)
    comment = selectors.comment_get(comment_id=comment_id, user_id=user_pk(request))
    context = {"comment": comment, "direction": direction, "back": back}
    return rendering.render(request, "articles/comment_vote_offer.html", context)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def comment_edit(request: HttpRequest, comment_id: int) -> HttpResponse:
    """The author's own comment, within ARTICLES_COMMENT_EDIT_SECONDS of posting it."""
    comment = selectors.comment_get(comment_id=comment_id)
    _own(request, comment)
    if not comment.editable_by(user_pk(request), clock.now()):
        raise EditWindowClosed()
    form = CommentEditForm(request.POST or None, initial={"text": comment.text})
    if request.method == "POST" and form.is_valid():
        try:
            comment = services.comment_edit(
                comment_id=comment.id, actor=Actor.of(request.user), text=form.cleaned_data["text"]
            )
        except InvalidInput as exc:
            form.add_store_error(exc)
        else:
            messages.success(request, gettext("Your comment is updated."))
            return redirect(_permalink(comment))
    context = {"comment": comment, "form": form, "action": "edit"}
    return rendering.render(
        request, "articles/comment_change.html", context, status=form_status(form)
    )


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def comment_delete(request: HttpRequest, comment_id: int) -> HttpResponse:
    """The author's own comment, after a confirmation page: "[deleted]" stays in its place
    while it has replies."""
    comment = selectors.comment_get(comment_id=comment_id)
    _own(request, comment)
    if request.method == "POST":
        services.comment_delete(comment_id=comment.id, actor=Actor.of(request.user))
        messages.success(request, gettext("Your comment is deleted."))
        return redirect(_context_of(comment))
    context = {"comment": comment, "action": "delete"}
    return rendering.render(request, "articles/comment_change.html", context)


@staff_required
@require_http_methods(["GET", "POST"])
@html_errors
def comment_remove(request: HttpRequest, comment_id: int) -> HttpResponse:
    """Staff: remove a comment, with a reason for the moderation log; "[removed]" stays in
    its place while it has replies."""
    comment = selectors.comment_get(comment_id=comment_id)
    form = CommentRemoveForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        services.comment_remove(
            comment_id=comment.id, actor=Actor.of(request.user), reason=form.cleaned_data["reason"]
        )
        messages.success(request, gettext("Comment %(id)d removed.") % {"id": comment.id})
        return redirect(_context_of(comment))
    context = {"comment": comment, "form": form, "action": "remove"}
    return rendering.render(
        request, "articles/comment_change.html", context, status=form_status(form)
    )


# --- helpers ---------------------------------------------------------------------------


def _own(request: HttpRequest, comment: Comment) -> None:
    if not comment.visible:
        raise NotAllowed(gettext("This comment is deleted; there is nothing left to change."))
    if comment.author_id != request.user.pk:
        raise NotAllowed(gettext("Only its author may change a comment."))


def _permalink(comment: Comment) -> str:
    return reverse("articles:comment-detail", args=[comment.article_id, comment.id])


def _shown_at(request: HttpRequest, comment: Comment) -> str:
    """Back to the thread page the form was sent from (`next`: its sort and page kept), at
    the new comment. Without `next`, where a new comment is sure to be on the first page:
    newest first, under its parent (a reply) or the article (a top-level comment)."""
    back = safe_next(request, "")
    if back:
        return f"{back.split('#')[0]}#c{comment.id}"
    if comment.parent_id is None:
        base = reverse("articles:article-detail", args=[comment.article_id])
    else:
        base = reverse("articles:comment-detail", args=[comment.article_id, comment.parent_id])
    return f"{base}?sort=new#c{comment.id}"


def _context_of(comment: Comment) -> str:
    """The page a changed comment sits in: its parent's permalink, or the article's."""
    if comment.parent_id is None:
        return reverse("articles:article-detail", args=[comment.article_id]) + "#comments"
    return reverse("articles:comment-detail", args=[comment.article_id, comment.parent_id])


def _form_page(request: HttpRequest, article_id: int, form: CommentForm) -> HttpResponse:
    """The refused comment form again, with what was typed, under what it answers."""
    article = selectors.article_get(article_id=article_id)
    parent_id = _parent_of(form)
    parent = selectors.comment_get(comment_id=parent_id) if parent_id else None
    context = {"article": article, "parent": parent, "form": form}
    return form_response(rendering.render(request, "articles/comment_form.html", context), form)
