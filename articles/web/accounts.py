"""The app's own account pages (log in, log out, sign up, password change and reset, account
settings and deletion, API tokens), so a host project needs no auth URLs or templates of
its own to run the site."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import PasswordResetForm
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse, reverse_lazy
from django.utils.html import format_html
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods, require_POST

from articles import conf
from articles.errors import RateLimited
from articles.http.addresses import user_pk
from articles.http.loginpage import LOGIN_URL
from articles.http.responses import answered_as
from articles.store import logins, people, ratelimits, tokens
from articles.web import intents
from articles.web.forms import (
    LOOKALIKE,
    AccountForm,
    DeleteAccountForm,
    PasswordChangeForm,
    SignUpForm,
    taken_message,
)
from articles.web.helpers import (
    form_rate_limit,
    form_response,
    form_status,
    html_errors,
    safe_next,
)
from articles.web.rendering import JinjaTemplateMixin, render, render_to_string


class LoginView(JinjaTemplateMixin, auth_views.LoginView):
    """Django's login, its password checked under the failed-login limits
    (logins.password_check) and a vote asked for while logged out cast on success."""

    template_name = "articles/accounts/login.html"
    # A logged-in visitor sent here (a stale link, the back button) goes on to `next`.
    redirect_authenticated_user = True

    def get_default_redirect_url(self) -> str:
        return reverse("articles:home")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        form = self.get_form()
        try:
            valid = logins.password_check(request, request.POST.get("username", ""), form.is_valid)
        except RateLimited as exc:
            # Not cleaned again (that would add "enter a correct username and password"):
            # the lock is the one reason, and the name typed stays in its field.
            form = self.form_class(request, initial={"username": request.POST.get("username")})
            context = self.get_context_data(form=form, locked=_locked(exc.message))
            return answered_as(self.render_to_response(context), exc)
        return self.form_valid(form) if valid else self.form_invalid(form)

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        response.status_code = 400
        return response

    def form_valid(self, form: Any) -> HttpResponse:
        # Read before login(): logging in rotates the CSRF secret the intent is bound to.
        intent = intents.read(self.request, self.request.POST.get(intents.FIELD))
        response = super().form_valid(form)
        if intent is not None:
            return redirect(intents.cast(self.request, intent))
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        return {**context, **_intent_context(self.request)}


def _locked(message: str) -> str:
    """The lock's message, its way out ("reset your password") a link to the reset page."""
    before, hint, after = message.rpartition(str(ratelimits.RESET_HINT))
    if not hint:
        return message
    link = format_html('<a href="{}">{}</a>', reverse("articles:password-reset"), hint)
    return format_html("{}{}{}", before, link, after)


# A Redis outage while the failed-login counters are read is the 503 page, not a 500.
login_view = html_errors(LoginView.as_view())


def _intent_context(request: HttpRequest) -> dict[str, Any]:
    """The vote a log-in or sign-up page was reached for: the signed intent for its form
    (new from the query's vote_on/direction, or carried in a form or link) and its article."""
    back = safe_next(request, "")
    token = (
        request.POST.get(intents.FIELD)
        or request.GET.get(intents.FIELD)
        or intents.requested(request, back or reverse("articles:home"))
    )
    intent = intents.read(request, token)
    return {
        "intent": intent,
        "intent_article": intents.described(intent),
        "comment_vote": intents.comment_vote_asked(back),
    }


class LogoutView(auth_views.LogoutView):
    def get_default_redirect_url(self) -> str:
        return reverse("articles:home")


class PasswordChangeView(JinjaTemplateMixin, auth_views.PasswordChangeView):
    """Django's, its old password checked under the failed-login limits: a wrong one is a
    400, a locked account or address a 429 with Retry-After (PasswordChangeForm)."""

    form_class = PasswordChangeForm
    template_name = "articles/accounts/password_change_form.html"
    success_url = reverse_lazy("articles:password-change-done")

    def get_form_kwargs(self) -> dict[str, Any]:
        return {**super().get_form_kwargs(), "request": self.request}

    def form_invalid(self, form: Any) -> HttpResponse:
        return form_response(super().form_invalid(form), form)


class PasswordChangeDoneView(JinjaTemplateMixin, auth_views.PasswordChangeDoneView):
    template_name = "articles/accounts/password_change_done.html"


class ResetForm(PasswordResetForm):
    """Django's reset form, its e-mail written with the app's templates (no Django template
    engine needed in the host)."""

    def send_mail(
        self,
        subject_template_name: str,
        email_template_name: str,
        context: dict[str, Any],
        from_email: str | None,
        to_email: str,
        html_email_template_name: str | None = None,
    ) -> None:
        context["reset_path"] = reverse(
            "articles:password-reset-confirm", args=[context["uid"], context["token"]]
        )
        subject = "".join(render_to_string(subject_template_name, context).splitlines())
        body = render_to_string(email_template_name, context)
        EmailMultiAlternatives(subject, body, from_email, [to_email]).send()


class PasswordResetView(JinjaTemplateMixin, auth_views.PasswordResetView):
    """Ask for a reset link by e-mail: the same answer whether or not an account has that
    address, so the page tells no one which addresses are registered."""

    form_class = ResetForm
    template_name = "articles/accounts/password_reset_form.html"
    email_template_name = "articles/accounts/password_reset_email.txt"
    subject_template_name = "articles/accounts/password_reset_subject.txt"
    success_url = reverse_lazy("articles:password-reset-done")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "mail_available": _mail_available()}

    def form_valid(self, form: Any) -> HttpResponse:
        if not _mail_available():
            return self.render_to_response(self.get_context_data(form=form))
        ratelimits.check(self.request, "password_reset")
        self.extra_email_context = {"articles_site_name": conf.site_name()}
        return super().form_valid(form)


def _mail_available() -> bool:
    """False when the site sends no mail (Django's dummy backend, as a host chooses with no
    SMTP server): the reset page says so rather than promise a link that never comes."""
    return settings.EMAIL_BACKEND != "django.core.mail.backends.dummy.EmailBackend"


class PasswordResetDoneView(JinjaTemplateMixin, auth_views.PasswordResetDoneView):
    template_name = "articles/accounts/password_reset_done.html"


class PasswordResetConfirmView(JinjaTemplateMixin, auth_views.PasswordResetConfirmView):
    template_name = "articles/accounts/password_reset_confirm.html"
    success_url = reverse_lazy("articles:password-reset-complete")


class PasswordResetCompleteView(JinjaTemplateMixin, auth_views.PasswordResetCompleteView):
    template_name = "articles/accounts/password_reset_complete.html"


password_reset = html_errors(PasswordResetView.as_view())
password_reset_done = PasswordResetDoneView.as_view()
password_reset_confirm = PasswordResetConfirmView.as_view()
password_reset_complete = PasswordResetCompleteView.as_view()
password_change = login_required(
    html_errors(PasswordChangeView.as_view()),
    login_url=LOGIN_URL,
)
password_change_done = login_required(PasswordChangeDoneView.as_view(), login_url=LOGIN_URL)


@require_http_methods(["GET", "POST"])
@html_errors
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(safe_next(request, reverse("articles:home")))
    form = SignUpForm(request.POST or None)
    intent = intents.read(request, request.POST.get(intents.FIELD))
    if request.method == "POST" and form_rate_limit("signup", request, form) and form.is_valid():
        try:
            # The form checked the name was free; another sign-up may have taken it
            # since. The database's UNIQUE constraint decides; the loser is told so.
            with transaction.atomic():
                user = form.save()
        except IntegrityError:
            name = form.name_field
            form.add_error(name, taken_message(form.cleaned_data[name]) or LOOKALIKE)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(
                request,
                gettext("Welcome, %(name)s! Your account is made.") % {"name": user.get_username()},
            )
            if intent is not None:
                return redirect(intents.cast(request, intent))
            return redirect(safe_next(request, reverse("articles:home")))
    context = {"form": form, "next": safe_next(request, ""), **_intent_context(request)}
    return form_response(render(request, "articles/accounts/signup.html", context), form)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def account_settings(request: HttpRequest) -> HttpResponse:
    """Your account: e-mail address, "about" text and the replies digest; links to the
    password and API token pages; and deleting the account."""
    profile = people.profile_of(request.user)
    form = AccountForm(
        request.POST or None,
        initial={
            "email": people.email_of(request.user),
            "about": profile.about,
            "inbox_digest": profile.inbox_digest,
        },
    )
    if request.method == "POST" and form.is_valid():
        people.account_update(user=request.user, **form.cleaned_data)
        messages.success(request, gettext("Your account is saved."))
        return redirect("articles:account-settings")
    delete_form = DeleteAccountForm(user=request.user, request=request)
    return _account_page(request, form=form, delete_form=delete_form)


@login_required(login_url=LOGIN_URL)
@require_POST
@html_errors
def account_delete(request: HttpRequest) -> HttpResponse:
    """Delete the account (after its password): its articles stay, shown as by [deleted]."""
    form = DeleteAccountForm(request.POST, user=request.user, request=request)
    if not form.is_valid():
        profile = people.profile_of(request.user)
        settings_form = AccountForm(
            initial={
                "email": people.email_of(request.user),
                "about": profile.about,
                "inbox_digest": profile.inbox_digest,
            }
        )
        return _account_page(request, form=settings_form, delete_form=form)
    people.account_delete(user=request.user)
    logout(request)
    messages.success(
        request, gettext("Your account is deleted. Its articles now show as by [deleted].")
    )
    return redirect("articles:home")


def _account_page(request: HttpRequest, **forms: Any) -> HttpResponse:
    """The page, answered with the status of its worst form: 429 (locked), 400 or 200."""
    worst = max(forms.values(), key=form_status)
    return form_response(render(request, "articles/accounts/settings.html", forms), worst)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def api_tokens(request: HttpRequest) -> HttpResponse:
    """How many API tokens the user has, and a button that revokes them."""
    if request.method == "POST":
        revoked = tokens.user_tokens_revoke(user=request.user)
        messages.success(
            request,
            gettext("Your API tokens are revoked (%(count)d).") % {"count": revoked}
            if revoked
            else gettext("You had no API token to revoke."),
        )
        return redirect("articles:api-tokens")
    count = tokens.user_token_count(user_id=user_pk(request))
    return render(request, "articles/accounts/api_tokens.html", {"token_count": count})
