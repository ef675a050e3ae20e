"""One person, not one uid (docs/many-machines.md, "One person across hosts").

Rows are owned by a number (`owner_uid`). On one host it is the person's uid, as it always
was. Across hosts it is the *person's* number: kept once per person in the database, the uid
of the first host they registered from, so their uid on another host (a different one, say
1000 on the laptop and 501 on the build box) maps to the same number and sees the same
threads. Peer credentials are checked as before (only alpd's own uid reaches its socket);
the mapping happens after that check.

Who the person is: on PostgreSQL, the database role alpd connects as (`current_user`) —
the role row-level security binds the rows to (`alpd.store.postgres.persons`); `[person]
name`, when given, must name that role. On SQLite, `[person] name`, else the login name.
"""

from __future__ import annotations

from typing import Final

import msgspec

from alpd.domain.config_fields import Failer

__all__ = [
    "MAX_PERSON_CHARS",
    "PERSON_KEYS",
    "SPARE_BASE",
    "PersonNotRole",
    "PersonSettings",
    "owner_candidates",
    "parse_person_settings",
    "person_of",
]

PERSON_KEYS: Final = ("name",)
#: PostgreSQL's longest identifier, so a person's name is always a role's name too
MAX_PERSON_CHARS: Final = 63
#: numbers past every uid, for a person whose uid another person's number already is
SPARE_BASE: Final = 2**32
SPARE_COUNT: Final = 64


class PersonSettings(msgspec.Struct, frozen=True, kw_only=True):
    """`[person]`: who this alpd's rows belong to (None: derived, module docstring)."""

    name: str | None = None


class PersonNotRole(Exception):
    """`[person] name` is not the database role alpd connects as."""


def parse_person_settings(fail: Failer, table: object) -> PersonSettings:
    """PersonSettings from `[person]` (the default when config.toml has none)."""
    if table is None:
        return PersonSettings()
    if not isinstance(table, dict):
        fail(("person",), "person must be a table")
    for key in table:
        if key not in PERSON_KEYS:
            fail(("person", key), f"unknown key {key!r} in [person] (known: name)")
    name = table.get("name")
    if name is not None and (
        not isinstance(name, str)
        or not name.strip()
        or name != name.strip()
        or len(name) > MAX_PERSON_CHARS
        or not name.isprintable()
    ):
        fail(
            ("person", "name"),
            f"person.name must be a printable name of 1 to {MAX_PERSON_CHARS} characters "
            "(on PostgreSQL, the role in [store] url); leave it out to derive it",
        )
    return PersonSettings(name=name)


def person_of(configured: str | None, role: str | None, login: str) -> str:
    """The person this alpd's rows belong to: the database role (PostgreSQL; `configured`
    must then name it), else `configured`, else the login name."""
    if role is None:
        return configured or login
    if configured is not None and configured != role:
        raise PersonNotRole(
            f"[person] name is {configured!r} but alpd connects to the database as role "
            f"{role!r}, and a person's rows are their role's: connect as {configured!r} "
            "([store] url's user, or ALP_STORE_URL) or correct [person] name"
        )
    return role


def owner_candidates(uid: int) -> tuple[int, ...]:
    """The numbers a new person may take, best first: their uid, then spares past every uid
    (another person on the database may already have this uid as their number)."""
    return (uid, *(SPARE_BASE + k for k in range(SPARE_COUNT)))
