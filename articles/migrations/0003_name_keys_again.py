# Written by hand: the look-alike key (names.name_key) now maps more digits and letters
# together, so every stored key is computed again.

from typing import Any

from django.conf import settings
from django.db import migrations


def name_keys_again(apps: Any, schema_editor: Any) -> None:
    """Each profile's key computed again with the current names.name_key; of two users
    whose names now share a key, the older (lower pk) keeps it and the newer gets none
    (both keep logging in), as 0001 keyed them."""
    from django.apps import apps as current_apps

    from articles.names import name_key

    User = apps.get_model(settings.AUTH_USER_MODEL)
    field = current_apps.get_model(settings.AUTH_USER_MODEL).USERNAME_FIELD
    Profile = apps.get_model("articles", "Profile")
    usernames = dict(User.objects.values_list("pk", field))
    profiles = list(Profile.objects.order_by("user_id"))
    taken: set[str] = set()
    for profile in profiles:
        key = name_key(str(usernames[profile.user_id]))
        profile.name_key = None if key in taken else key
        taken.add(key)
    # Keys are unique: none is held while the new ones are written.
    Profile.objects.update(name_key=None)
    Profile.objects.bulk_update(profiles, ["name_key"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("articles", "0002_apitoken")]

    operations = [migrations.RunPython(name_keys_again, migrations.RunPython.noop)]
