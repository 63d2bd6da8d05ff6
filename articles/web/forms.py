"""HTML forms: shape and basic checks only; the store's validation has the last word."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from django import forms
from django.contrib.auth import forms as auth_forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import BaseUserCreationForm, UsernameField
from django.db import models
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _

from articles import conf, names, validation
from articles.errors import InvalidInput
from articles.i18n import filled_lazy
from articles.models import ABOUT_MAX
from articles.store import logins, people
from articles.types import Group, Vote

T = TypeVar("T")

# The mixins below go on forms: the type checker sees the form they go on.
if TYPE_CHECKING:
    _Form = forms.BaseForm
else:
    _Form = object


class StoreErrorsMixin(_Form):
    """Put a store InvalidInput on the field it names (or the form, if no such field)."""

    def add_store_error(self, exc: InvalidInput, aliases: dict[str, str] | None = None) -> None:
        name = (aliases or {}).get(exc.field, exc.field)
        self.add_error(name if name in self.fields else None, exc.message)


def _group_choices(groups: list[Group]) -> list[tuple[str, str]]:
    return [(g.name, g.name) for g in groups]


def _clean_with(rule: Callable[[Any], T], value: object) -> T:
    try:
        return rule(value)
    except InvalidInput as exc:
        raise forms.ValidationError(exc.message) from None


_User = get_user_model()


def _signup_fields() -> tuple[str, ...]:
    """The user model's login field and REQUIRED_FIELDS, then its e-mail field (optional,
    for password resets) if it has one they do not name already."""
    wanted = [_User.USERNAME_FIELD, *_User.REQUIRED_FIELDS]
    email = _User.get_email_field_name()
    if email not in wanted and any(f.name == email for f in _User._meta.get_fields()):
        wanted.append(email)
    return tuple(wanted)


def _is_email(field_name: str) -> bool:
    return isinstance(_User._meta.get_field(field_name), models.EmailField)


class SignUpForm(BaseUserCreationForm):
    """Built from the project's user model (its USERNAME_FIELD and REQUIRED_FIELDS): a login
    that looks like no other account's (a name within names.NAME_RULE, unless the login is
    an e-mail address), an optional e-mail address (for password resets), and a password."""

    name_field = _User.USERNAME_FIELD

    class Meta(BaseUserCreationForm.Meta):
        model = _User
        fields = _signup_fields()
        field_classes = (
            {} if _is_email(_User.USERNAME_FIELD) else {_User.USERNAME_FIELD: UsernameField}
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        email = self.fields.get(_User.get_email_field_name())
        if (
            email is not None
            and not email.required
            and _User.get_email_field_name() != self.name_field
        ):
            email.label = _("E-mail (optional)")
            email.help_text = _("Only for resetting a forgotten password; never shown to anyone.")
        if _is_email(self.name_field):
            return  # an address is not a name: the name rule is not for it
        username = self.fields[self.name_field]
        assert isinstance(username, forms.CharField)
        username.help_text = names.NAME_HELP
        username.max_length = names.NAME_MAX
        username.widget.attrs["maxlength"] = str(names.NAME_MAX)

    def clean_login_name(self) -> str:
        """The login, taken as it is (any case, as Django does); refused if another account
        has it in any case, or a look-alike of it."""
        name = str(self.cleaned_data[self.name_field])
        if (taken := taken_message(name)) is not None:
            raise forms.ValidationError(taken)
        if not _is_email(self.name_field) and not names.allowed(name):
            raise forms.ValidationError(gettext("A name is %(rule)s") % {"rule": names.NAME_HELP})
        return name

    def save(self, commit: bool = True) -> Any:
        user = super().save(commit=False)
        user.strict_name = True  # a look-alike that raced in fails the save (people.py)
        if commit:
            user.save()
            self.save_m2m()
        return user


# Django calls clean_<field> by the field's name, which is the user model's to choose.
setattr(SignUpForm, f"clean_{SignUpForm.name_field}", SignUpForm.clean_login_name)

LOOKALIKE = _("That name looks like another account's name; please choose another.")


def taken_message(name: str) -> str | None:
    """Why `name` cannot be had, or None: another account has it in any case, or a
    look-alike of it. The exact-name check is made again after a look-alike is seen, since
    a sign-up of this very name may have committed between the two queries; the refusal
    then names the true cause. A lost sign-up race asks the same question."""
    field = _User.USERNAME_FIELD

    def exact() -> bool:
        return bool(_User._default_manager.filter(**{f"{field}__iexact": name}).exists())

    unique = str(_User().unique_error_message(_User, [field]).messages[0])
    if exact():
        return unique
    if not people.name_taken(name):
        return None
    return unique if exact() else str(LOOKALIKE)


class AccountForm(forms.Form):
    """What a user changes on their account page: e-mail address, "about" text, and the
    e-mail digest of unread replies."""

    email = forms.EmailField(
        required=False,
        label=_("E-mail"),
        help_text=_("For resetting a forgotten password; never shown. Leave empty for none."),
    )
    about = forms.CharField(
        required=False,
        max_length=ABOUT_MAX,
        widget=forms.Textarea(attrs={"rows": 4}),
        label=_("About you"),
        help_text=filled_lazy(
            gettext_noop("Shown on your user page, as plain text; at most %(max)d characters."),
            {"max": ABOUT_MAX},
        ),
    )

    inbox_digest = forms.BooleanField(
        required=False,
        label=_("E-mail me my unread replies"),
        help_text=_(
            "A digest of the replies to your articles and comments that you have not read, "
            "sent now and then to the address above. Off unless you tick it."
        ),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if people.email_field() is None:
            del self.fields["email"]  # no address apart from the login: it is not edited here


class DeleteAccountForm(forms.Form):
    """Deleting an account takes its password, so a left-open session cannot."""

    password = forms.CharField(
        label=_("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, user: Any, request: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        self.request = request

    def clean_password(self) -> str:
        password = str(self.cleaned_data["password"])
        logins.form_password_check(
            self, self.request, self.user, password, gettext("That is not your password.")
        )
        return password


class PasswordChangeForm(auth_forms.PasswordChangeForm):
    """Django's, its old password checked under the failed-login limits."""

    def __init__(self, user: Any, *args: Any, request: Any, **kwargs: Any) -> None:
        super().__init__(user, *args, **kwargs)
        self.request = request

    def clean_old_password(self) -> str:
        old = str(self.cleaned_data["old_password"])
        wrong = self.error_messages["password_incorrect"]
        logins.form_password_check(self, self.request, self.user, old, str(wrong))
        return old


# Under every text the pages render as Markdown (an article's, a comment's), the same words.
MARKDOWN_HELP = _("Markdown: *emphasis*, `code`, [links](https://example.org), > quotes, - lists.")


class ArticleSubmitForm(StoreErrorsMixin, forms.Form):
    title = forms.CharField(label=_("Title"), max_length=validation.TITLE_MAX)
    link = forms.CharField(
        label=_("Link"),
        max_length=validation.LINK_MAX,
        required=False,
        help_text=_("An http:// or https:// address. Give a link, a text, or both."),
        widget=forms.URLInput(attrs={"placeholder": "https://"}),
    )
    text = forms.CharField(
        label=_("Text"),
        max_length=validation.TEXT_MAX,
        required=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=MARKDOWN_HELP,
    )
    groups = forms.MultipleChoiceField(
        label=_("Groups"), required=False, widget=forms.CheckboxSelectMultiple, choices=()
    )
    idempotency_key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=128)

    def __init__(self, *args: Any, groups: Sequence[Group] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _choices(self, "groups", _group_choices(list(groups)))
        _keyed(self)

    def clean_title(self) -> str:
        return _clean_with(validation.clean_title, self.cleaned_data["title"])

    def clean_link(self) -> str:
        return _clean_with(validation.clean_link, self.cleaned_data["link"])

    def clean_text(self) -> str:
        return _clean_with(validation.clean_text, self.cleaned_data["text"])

    def clean_idempotency_key(self) -> str | None:
        value = self.cleaned_data["idempotency_key"]
        return value or None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and not data.get("link") and not data.get("text"):
            self.add_error("link", gettext("Give a link, a text, or both."))
        return data


class VoteForm(forms.Form):
    direction = forms.ChoiceField(label=_("Direction"), choices=[(v.label, v.label) for v in Vote])

    @property
    def vote(self) -> Vote:
        return Vote.from_label(self.cleaned_data["direction"])


class GroupCreateForm(StoreErrorsMixin, forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=validation.GROUP_NAME_MAX, help_text=validation.GROUP_NAME_HELP
    )
    description = forms.CharField(
        label=_("Description"),
        max_length=validation.DESCRIPTION_MAX,
        required=False,
        widget=forms.Textarea({"rows": 3}),
    )

    def clean_name(self) -> str:
        return _clean_with(
            lambda v: validation.clean_group_name(v, "name"), self.cleaned_data["name"]
        )


class GroupUpdateForm(StoreErrorsMixin, forms.Form):
    description = forms.CharField(
        label=_("Description"),
        max_length=validation.DESCRIPTION_MAX,
        required=False,
        widget=forms.Textarea({"rows": 3}),
    )


class ReasonForm(StoreErrorsMixin, forms.Form):
    """Delete an article or a group: the reason goes to the public moderation log."""

    reason = forms.CharField(label=_("Reason"), max_length=validation.REASON_MAX, required=False)


class DeleteReasonForm(StoreErrorsMixin, forms.Form):
    """Staff deleting an article: the reason is required, and public in the moderation log."""

    reason = forms.CharField(
        label=_("Reason"),
        max_length=validation.REASON_MAX,
        help_text=_("Shown in the public moderation log."),
    )

    def clean_reason(self) -> str:
        return _clean_with(validation.clean_reason, self.cleaned_data["reason"])


class _TextEditMixin(_Form):
    """An edit form's `text` field, kept only for an article that has a text: a link post
    stays a link post."""

    def drop_text_unless(self, has_text: bool) -> None:
        if not has_text:
            del self.fields["text"]

    def clean_title(self) -> str:
        return _clean_with(validation.clean_title, self.cleaned_data["title"])

    def clean_text(self) -> str:
        return _clean_with(validation.clean_text, self.cleaned_data["text"])


class ArticleEditForm(_TextEditMixin, StoreErrorsMixin, forms.Form):
    """Staff: an article's title, link and (for an article with a text) its text."""

    title = forms.CharField(label=_("Title"), max_length=validation.TITLE_MAX)
    link = forms.CharField(label=_("Link"), max_length=validation.LINK_MAX, required=False)
    text = forms.CharField(
        label=_("Text"),
        max_length=validation.TEXT_MAX,
        required=False,
        widget=forms.Textarea({"rows": 6}),
    )
    reason = forms.CharField(label=_("Reason"), max_length=validation.REASON_MAX, required=False)

    def __init__(self, *args: Any, has_text: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.drop_text_unless(has_text)

    def clean_link(self) -> str:
        return _clean_with(validation.clean_link, self.cleaned_data["link"])


class PosterEditForm(_TextEditMixin, StoreErrorsMixin, forms.Form):
    """The poster's own edit while voting is open: the title, and the text of a text post
    (the link stays as posted: votes were cast for it)."""

    title = forms.CharField(label=_("Title"), max_length=validation.TITLE_MAX)
    text = forms.CharField(
        label=_("Text"),
        max_length=validation.TEXT_MAX,
        required=False,
        widget=forms.Textarea({"rows": 8}),
        help_text=MARKDOWN_HELP,
    )

    def __init__(self, *args: Any, has_text: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.drop_text_unless(has_text)


class ArticleGroupsForm(StoreErrorsMixin, forms.Form):
    add = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, choices=(), label=_("Add to")
    )
    remove = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, choices=(), label=_("Remove from")
    )
    reason = forms.CharField(label=_("Reason"), max_length=validation.REASON_MAX, required=False)

    def __init__(
        self,
        *args: Any,
        groups: Sequence[Group] = (),
        current: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        # The staff article page holds it beside the edit form, which has a reason too:
        # its own ids keep each label naming its own field.
        kwargs.setdefault("auto_id", "id_groups_%s")
        super().__init__(*args, **kwargs)
        names = [g.name for g in groups]
        _choices(self, "add", [(n, n) for n in names if n not in current])
        _choices(self, "remove", [(n, n) for n in current])

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors and not data.get("add") and not data.get("remove"):
            self.add_error(
                "add", gettext("Choose a group to add the article to or remove it from.")
            )
        return data


def _keyed(form: forms.Form) -> None:
    """An unbound form's idempotency key, new unless the caller gave one; set on a copy of
    `initial` (Django keeps the caller's dict), so forms built from one dict each get theirs."""
    if not form.is_bound and "idempotency_key" not in form.initial:
        form.initial = {**form.initial, "idempotency_key": uuid.uuid4().hex}


def _choices(form: forms.Form, name: str, choices: list[tuple[str, str]]) -> None:
    field = form.fields[name]
    assert isinstance(field, forms.ChoiceField)
    field.choices = choices


class CommentForm(StoreErrorsMixin, forms.Form):
    """A new comment or reply; the text rule (length, not empty) is the store's."""

    text = forms.CharField(
        label=_("Comment"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=MARKDOWN_HELP,
    )
    parent = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=1)
    idempotency_key = forms.CharField(widget=forms.HiddenInput, required=False, max_length=128)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["text"].widget.attrs["maxlength"] = str(conf.comment_max_length())
        _keyed(self)

    def clean_text(self) -> str:
        return _comment_text(self.cleaned_data["text"])

    def clean_idempotency_key(self) -> str | None:
        return self.cleaned_data["idempotency_key"] or None

    def renew_key(self) -> None:
        """Show the form again with a new idempotency key (and the rest as sent)."""
        sent = {name: self.data.get(name) for name in self.data}
        self.data = {**sent, "idempotency_key": uuid.uuid4().hex}


class CommentEditForm(StoreErrorsMixin, forms.Form):
    text = forms.CharField(
        label=_("Comment"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 6}),
        help_text=CommentForm.base_fields["text"].help_text,
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["text"].widget.attrs["maxlength"] = str(conf.comment_max_length())

    def clean_text(self) -> str:
        return _comment_text(self.cleaned_data["text"])


class CommentRemoveForm(StoreErrorsMixin, forms.Form):
    """Staff removal of a comment: the reason is shown in the public moderation log."""

    reason = forms.CharField(
        label=_("Reason"),
        max_length=validation.REASON_MAX,
        help_text=_("Shown in the public moderation log."),
    )


def _comment_text(value: str) -> str:
    """Browsers send a textarea's line breaks as CRLF but count them as one character
    against its maxlength: store them as LF, so the store's limit is the one they saw."""
    return _clean_with(validation.clean_comment_text, value.replace("\r\n", "\n"))
