"""A repository's identity (alpd/domain/threads/repository.py): one spelling per remote, and
no credential ever kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.threads.repository import normalise_remote, subpath_within


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:Owner/Repo.git",
        "https://github.com/Owner/Repo",
        "https://github.com/Owner/Repo.git/",
        "ssh://git@GitHub.com:22/Owner/Repo.git",
        "git+ssh://git@github.com/Owner/Repo",
        "https://x-access-token:ghp_abc123@github.com/Owner/Repo.git",
        "  git://github.com/Owner/Repo.git\n",
    ],
)
def test_the_spellings_of_one_remote_are_one(url: str) -> None:
    assert normalise_remote(url) == "github.com/Owner/Repo"


def test_a_local_remote_stays_a_path() -> None:
    assert normalise_remote("/srv/git/repo.git/") == "file:/srv/git/repo.git"
    assert normalise_remote("file:///srv/git/repo.git") == "file:/srv/git/repo.git"


def test_an_ipv6_host_keeps_its_colons() -> None:
    assert normalise_remote("ssh://git@[::1]:2222/team/app.git") == "[::1]/team/app"


words = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=12)


@given(words, words, words, words, st.sampled_from(["https", "ssh", "http", "git+ssh"]))
def test_no_user_or_password_survives(
    user: str, password: str, owner: str, repo: str, scheme: str
) -> None:
    secret = f"S3cr3t{password}"
    normalised = normalise_remote(f"{scheme}://{user}:{secret}@host.example/{owner}/{repo}.git")
    assert secret not in normalised
    assert normalised == f"host.example/{owner}/{repo}"


def test_a_path_within_a_checkout() -> None:
    assert subpath_within("/src/app", "/src/app") == ""
    assert subpath_within("/src/app", "/src/app/pkg/core") == "pkg/core"
    with pytest.raises(ValueError):
        subpath_within("/src/app", "/src/application")
