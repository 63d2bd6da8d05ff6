"""URLs of the articles app's pages, feeds and account pages (namespace "articles")."""

from django.urls import path, re_path, register_converter

from articles import validation
from articles.live.views import live_events
from articles.web import (
    accounts,
    comments,
    domains,
    feeds,
    flags,
    inbox,
    personal,
    staff,
    views,
    writing,
)
from articles.web.helpers import html_errors


class GroupNameConverter:
    """A group's name in a path, by validation.GROUP_NAME: any other is a 404, as in the API."""

    regex = validation.GROUP_NAME_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(GroupNameConverter, "group")

app_name = "articles"

urlpatterns = [
    path("", views.home, name="home"),
    path("top/", views.top, name="top"),
    path("new/", views.new, name="new"),
    path("search/", views.search, name="search"),
    path("groups/", views.group_list, name="group-list"),
    path("g/<group:name>/", views.group_detail, name="group-detail"),
    # Any spelling of a site (case, Unicode, "www."): the view redirects to its one name.
    path("d/<str:domain>/", domains.domain_detail, name="domain-detail"),
    re_path(r"^good/(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})/$", views.good_day, name="good-day"),
    path("a/<int:article_id>/", views.article_detail, name="article-detail"),
    path("a/<int:article_id>/vote/", writing.article_vote, name="article-vote"),
    *(
        path(f"a/<int:article_id>/{name}/", view, {"on": on}, name=f"article-{name}")
        for name, view, on in (
            ("hide", personal.article_hide, True),
            ("unhide", personal.article_hide, False),
            ("save", personal.article_save, True),
            ("unsave", personal.article_save, False),
        )
    ),
    path("a/<int:article_id>/vote/offer/", writing.article_vote_offer, name="article-vote-offer"),
    path("a/<int:article_id>/edit/", writing.article_edit, name="article-edit"),
    path("a/<int:article_id>/delete/", writing.article_delete, name="article-delete"),
    path("a/<int:item_id>/flag/", flags.item_flag, {"kind": "article"}, name="article-flag"),
    path("a/<int:article_id>/comment/", comments.comment_post, name="comment-post"),
    path(
        "a/<int:article_id>/c/<int:comment_id>/",
        comments.comment_detail,
        name="comment-detail",
    ),
    path("c/<int:comment_id>/", comments.comment_link, name="comment-link"),
    path("c/<int:comment_id>/vote/", comments.comment_vote, name="comment-vote"),
    path("c/<int:comment_id>/vote/offer/", comments.comment_vote_offer, name="comment-vote-offer"),
    path("c/<int:comment_id>/save/", personal.comment_save, {"on": True}, name="comment-save"),
    path("c/<int:comment_id>/unsave/", personal.comment_save, {"on": False}, name="comment-unsave"),
    path("c/<int:comment_id>/edit/", comments.comment_edit, name="comment-edit"),
    path("c/<int:comment_id>/delete/", comments.comment_delete, name="comment-delete"),
    path("c/<int:comment_id>/remove/", comments.comment_remove, name="comment-remove"),
    path("c/<int:item_id>/flag/", flags.item_flag, {"kind": "comment"}, name="comment-flag"),
    path("comments/", comments.recent_comments, name="recent-comments"),
    path("live/", live_events, name="live"),
    path("inbox/", inbox.inbox, name="inbox"),
    path("inbox/read/", inbox.inbox_read, name="inbox-read"),
    path("u/<int:user_id>/", views.user_by_id, name="user-by-id"),
    # The reader's own lists, before the comments page, which would take "<name>/saved"
    # for a name (personal._owner keeps an account of such a name its page).
    path(
        "u/<path:username>/saved/comments/",
        personal.own_comments,
        name="user-saved-comments",
    ),
    *(
        path(
            f"u/<path:username>/{kind}/", personal.own_articles, {"kind": kind}, name=f"user-{kind}"
        )
        for kind in ("saved", "hidden", "upvoted")
    ),
    # path, not str: a name made outside the sign-up's rule (the admin) may hold a "/".
    # Before the user page, which would take "<name>/comments" for a name; the view keeps
    # an account of that name its page.
    path("u/<path:username>/comments/", views.user_comments, name="user-comments"),
    path("u/<path:username>/", views.user_detail, name="user-detail"),
    path("submit/", writing.submit, name="submit"),
    path("signup/", accounts.signup, name="signup"),
    path("accounts/login/", accounts.login_view, name="login"),
    path("accounts/logout/", accounts.LogoutView.as_view(), name="logout"),
    path("accounts/password/", accounts.password_change, name="password-change"),
    path("accounts/password/done/", accounts.password_change_done, name="password-change-done"),
    path("accounts/tokens/", accounts.api_tokens, name="api-tokens"),
    path("accounts/settings/", accounts.account_settings, name="account-settings"),
    path("accounts/delete/", accounts.account_delete, name="account-delete"),
    path("accounts/password/reset/", accounts.password_reset, name="password-reset"),
    path(
        "accounts/password/reset/sent/",
        accounts.password_reset_done,
        name="password-reset-done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        accounts.password_reset_confirm,
        name="password-reset-confirm",
    ),
    path(
        "accounts/password/reset/done/",
        accounts.password_reset_complete,
        name="password-reset-complete",
    ),
    path("modlog/", views.modlog, name="modlog"),
    path("staff/", staff.staff_dashboard, name="staff-dashboard"),
    path("staff/groups/", staff.staff_groups, name="staff-groups"),
    path("staff/groups/<group:name>/", staff.staff_group_edit, name="staff-group-edit"),
    path("staff/groups/<group:name>/delete/", staff.staff_group_delete, name="staff-group-delete"),
    path("staff/flags/", flags.staff_flags, name="staff-flags"),
    re_path(
        r"^staff/flags/(?P<kind>article|comment)/(?P<item_id>[0-9]{1,18})/"
        r"(?P<decision>resolve|dismiss)/$",
        flags.staff_flag_decide,
        name="staff-flag-decide",
    ),
    path("staff/a/<int:article_id>/", staff.staff_article, name="staff-article"),
    path(
        "staff/a/<int:article_id>/groups/",
        staff.staff_article_groups,
        name="staff-article-groups",
    ),
    path(
        "staff/a/<int:article_id>/delete/",
        staff.staff_article_delete,
        name="staff-article-delete",
    ),
    path("feeds/top/", html_errors(feeds.TopFeed()), name="feed-top"),
    path("feeds/top/<slug:period>/", html_errors(feeds.TopPeriodFeed()), name="feed-top-period"),
    path("feeds/new/", html_errors(feeds.NewFeed()), name="feed-new"),
    path("feeds/good/", html_errors(feeds.GoodFeed()), name="feed-good"),
    path("feeds/g/<group:name>/", html_errors(feeds.GroupFeed()), name="feed-group"),
    path(
        "feeds/a/<int:article_id>/comments/",
        html_errors(feeds.ArticleCommentsFeed()),
        name="feed-article-comments",
    ),
    path("feeds/comments/", html_errors(feeds.RecentCommentsFeed()), name="feed-comments"),
    path(
        "feeds/u/<int:user_id>/comments/",
        html_errors(feeds.UserCommentsFeed()),
        name="feed-user-comments",
    ),
]
