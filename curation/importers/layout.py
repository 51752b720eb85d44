"""Where a record sits in the R-Judge layout: `<Category>/<scenario>.json`."""

from __future__ import annotations

import re

# The category of records whose record, folder and import all name none.
UNCATEGORIZED = "Uncategorized"

_UNSAFE_CHARACTERS = re.compile(r'[\x00-\x1f/\\:*?"<>|]')


def path_part(name: str) -> str:
    """`name` made safe as one component of a relative path.

    Category and scenario names come from records, which are untrusted: an export must never
    write outside its folder, whatever they say.
    """
    part = _UNSAFE_CHARACTERS.sub("_", name).strip()
    if not part or part.startswith("."):
        part = "_" + part
    return part


def layout_path(folder: str, file_name: str) -> str:
    """The path of a file of the R-Judge layout, relative to its root."""
    return f"{path_part(folder)}/{path_part(file_name)}"
