"""The SQLite file holds password hashes, sessions and token digests: readable by its owner only."""

from __future__ import annotations

import os
import stat
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper


def private_sqlite_file(sender: object, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """Make the database file (and so the journals SQLite creates beside it, which take its
    mode) 0600 on each new connection: sqlite3 creates it with the process umask (0644 by
    default), and a file made by an older start is put right too."""
    if connection.vendor != "sqlite" or connection.is_in_memory_db():
        return
    name = str(connection.settings_dict["NAME"])
    if name.startswith("file:"):
        return  # a URI names its own options; left as given
    try:
        mode = stat.S_IMODE(os.stat(name).st_mode)
    except FileNotFoundError:
        return
    if mode & 0o077:
        os.chmod(name, 0o600)
