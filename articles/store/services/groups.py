"""Group writes: create, update, delete and the bounded purge after it."""

from __future__ import annotations

import logging

from django.utils.translation import gettext

from articles import conf, validation
from articles.errors import (
    Conflict,
)
from articles.operations.replication import replicated
from articles.store import keys, scripts
from articles.store.connection import get_connection
from articles.store.scripts import raise_for_status
from articles.store.services._common import (
    CLEANUP_BATCH,
    _finish_or_leave,
    _log,
    _staff_only,
)
from articles.types import Actor, Status

logger = logging.getLogger("articles.store.services")  # the package's one logger


@replicated
def group_create(*, name: str, actor: Actor, description: str = "") -> None:
    """Staff register a new group. Raises NotAllowed, InvalidInput, GroupExists."""
    _staff_only(actor, gettext("Only staff may create a group."))
    _group_save(name=name, description=description, actor=actor, mode="create")


@replicated
def group_update(*, name: str, description: str, actor: Actor) -> None:
    """Staff change a group's description. Raises NotAllowed, InvalidInput, GroupNotFound."""
    _staff_only(actor, gettext("Only staff may change a group."))
    _group_save(name=name, description=description, actor=actor, mode="update")


def _group_save(*, name: str, description: str, actor: Actor, mode: str) -> None:
    name = validation.clean_group_name(name, "name")
    description = validation.clean_description(description)
    entry = _log(actor.name, f"group_{mode}", keys.group(name), "", None, description=description)
    result = scripts.GROUP_SAVE(
        keys=[keys.GROUPS, keys.MODLOG],
        args=[name, description, mode, entry, conf.modlog_length()],
        # Sent once: a create sent again answered "group exists" for the group it made.
        client=get_connection(retry=False),
    )
    raise_for_status(result)


@replicated
def group_delete(*, name: str, actor: Actor, reason: str = "") -> None:
    """Staff delete a group and take it off its articles. The group goes in one small step
    (its page and listings at once), its name off the members' `groups` fields in
    bounded batches after it (group_purge). Raises NotAllowed, GroupNotFound."""
    _staff_only(actor, gettext("Only staff may delete a group."))
    name = validation.clean_group_name(name, "name")
    reason = validation.clean_reason(reason)
    entry = _log(actor.name, "group_delete", keys.group(name), reason, None)
    for _ in range(scripts.ATTEMPTS):
        result = scripts.GROUP_DELETE(
            keys=[
                keys.GROUPS,
                keys.group(name),
                keys.group_order(keys.SCORE, name),
                keys.group_order(keys.TIME, name),
                keys.MODLOG,
                keys.PURGE,
                keys.group_purge(name),
                keys.GROUP_RANKS,
            ],
            args=[name, entry, conf.modlog_length(), keys.group(name)],
            client=get_connection(retry=False),  # sent once: a repeat would answer 404
        )
        if raise_for_status(result, allow=(Status.RETRY,)) is Status.OK:
            _finish_or_leave(lambda: group_purge(name=name), f"group {name}: fields")
            return
        group_purge(name=name)  # an earlier deletion of this name, left half-way
    raise Conflict()


def group_purge(*, name: str) -> None:
    """Take a deleted group's name off its former members, CLEANUP_BATCH a script call."""
    left = 1
    while left:
        reply = scripts.GROUP_PURGE(
            keys=[keys.group_purge(name), keys.group(name), keys.PURGE],
            args=[name, CLEANUP_BATCH, keys.group(name)],
            client=get_connection(),  # each batch is safe to repeat
        )
        raise_for_status(reply)
        left = int(reply[1])
