"""The logical backup of the store: export_articles writes it, import_articles restores it.

records checks each record of a file (export checks each comment by the same rules),
export reads the store into records, restore writes a checked file all or nothing (staged in
a scratch database, then swapped in).
"""

from articles.operations.backup.export import store_export
from articles.operations.backup.records import EXPORT_VERSION
from articles.operations.backup.restore import (
    ScratchInUse,
    StoreNotEmpty,
    store_is_empty,
    store_restore,
)

__all__ = [
    "EXPORT_VERSION",
    "ScratchInUse",
    "StoreNotEmpty",
    "store_export",
    "store_is_empty",
    "store_restore",
]
