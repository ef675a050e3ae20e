"""A workspace's repository identity: which repository a checkout is, whatever host it is on
(pure; `alpd.workspace.repository_of` asks git).

`normalise_remote` maps the spellings of one remote to one string, in this order: surrounding
space dropped; the scp-like form `user@host:path` read as `ssh://user@host/path`; the scheme
dropped (`https://`, `ssh://`, `git://`, `git+ssh://` …; `file://` and a plain path kept as
`file:` + the path, since a local remote is only the same repository on the same host); the
user and password dropped (`https://tok@host/…` stores no token); the host lowercased and
its port dropped; trailing `/` and one `.git` dropped. So
`git@github.com:Owner/Repo.git`, `https://github.com/Owner/Repo` and
`ssh://git@GitHub.com:22/Owner/Repo.git/` are all `github.com/Owner/Repo` (the path keeps its
case: many hosts treat it as significant).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

__all__ = ["Repository", "normalise_remote", "subpath_within"]

_SCP_LIKE: Final = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")
_URL: Final = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?P<rest>.*)$")


class Repository(NamedTuple):
    """A checkout's identity: its remote normalised, and a path's place within it."""

    remote: str
    #: the path within the checkout, '/'-separated, '' at its top
    subpath: str


def normalise_remote(url: str) -> str:
    """One spelling per remote (module docstring)."""
    text = url.strip()
    match = _URL.match(text)
    if match is None:
        scp = _SCP_LIKE.match(text)
        if scp is None or text.startswith("/"):
            return "file:" + text.rstrip("/")
        host, path = scp["host"], scp["path"]
    else:
        scheme, rest = match["scheme"].lower(), match["rest"]
        if scheme == "file":
            return "file:" + rest.rstrip("/")
        authority, _, path = rest.partition("/")
        host = authority.rpartition("@")[2]
        # an IPv6 literal keeps its colons; any other host loses its port
        ipv6 = host.startswith("[")
        host = host[: host.find("]") + 1] if ipv6 else host.partition(":")[0]
    path = path.strip("/")
    path = path.removesuffix(".git").rstrip("/")
    return f"{host.lower()}/{path}"


def subpath_within(top: str, path: str) -> str:
    """`path`'s place within the checkout at `top` ('' at the top itself); both absolute and
    resolved. ValueError when `path` is not inside `top`."""
    top, path = top.rstrip("/") or "/", path.rstrip("/") or "/"
    if path == top:
        return ""
    prefix = top if top.endswith("/") else top + "/"
    if not path.startswith(prefix):
        raise ValueError(f"{path} is not inside {top}")
    return path[len(prefix) :]
