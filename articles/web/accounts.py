"""The app's own account pages (log in, log out, sign up, password change, API tokens), so
a host project needs no auth URLs or templates of its own to run the site."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse, reverse_lazy
from django.views.decorators.http import require_http_methods

from articles.addresses import user_pk
from articles.api import tokens
from articles.web.forms import SignUpForm
from articles.web.helpers import form_rate_limit, form_response, html_errors, safe_next
from articles.web.rendering import JinjaTemplateMixin, render

LOGIN_URL = reverse_lazy("articles:login")


class LoginView(JinjaTemplateMixin, auth_views.LoginView):
    template_name = "articles/accounts/login.html"

    def get_default_redirect_url(self) -> str:
        return reverse("articles:home")


class LogoutView(auth_views.LogoutView):
    def get_default_redirect_url(self) -> str:
        return reverse("articles:home")


class PasswordChangeView(JinjaTemplateMixin, auth_views.PasswordChangeView):
    template_name = "articles/accounts/password_change_form.html"
    success_url = reverse_lazy("articles:password-change-done")


class PasswordChangeDoneView(JinjaTemplateMixin, auth_views.PasswordChangeDoneView):
    template_name = "articles/accounts/password_change_done.html"


password_change = login_required(PasswordChangeView.as_view(), login_url=LOGIN_URL)
password_change_done = login_required(PasswordChangeDoneView.as_view(), login_url=LOGIN_URL)


@require_http_methods(["GET", "POST"])
@html_errors
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(safe_next(request, reverse("articles:home")))
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form_rate_limit("signup", request, form) and form.is_valid():
        try:
            # The form checked the name was free; another sign-up may have taken it
            # since. The database's UNIQUE constraint decides; the loser is told so.
            with transaction.atomic():
                user = form.save()
        except IntegrityError:
            form.add_error("username", "A user with that username already exists.")
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.get_username()}! You are logged in.")
            return redirect(safe_next(request, reverse("articles:home")))
    context = {"form": form, "next": safe_next(request, "")}
    return form_response(render(request, "articles/accounts/signup.html", context), form)


@login_required(login_url=LOGIN_URL)
@require_http_methods(["GET", "POST"])
@html_errors
def api_tokens(request: HttpRequest) -> HttpResponse:
    """Whether the user has an API token, and a button that revokes it."""
    if request.method == "POST":
        revoked = tokens.user_tokens_revoke(user=request.user)
        messages.success(
            request,
            "Your API token is revoked." if revoked else "You had no API token to revoke.",
        )
        return redirect("articles:api-tokens")
    has_token = tokens.Token.objects.filter(user_id=user_pk(request)).exists()
    return render(request, "articles/accounts/api_tokens.html", {"has_token": has_token})
