"""Path defaults (home, socket, config) and the private-directory check."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from alpd.paths import UnsafeDirectory, config_path, ensure_private_dir
from protocol.paths import default_home, default_socket_path

NOBODY = 65534


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_home_is_alp_home_when_set(tmp_path: Path) -> None:
    assert Path(default_home({"ALP_HOME": str(tmp_path / "h")})) == tmp_path / "h"


def test_home_defaults_to_dot_alp_in_the_user_home() -> None:
    assert Path(default_home({})) == Path.home() / ".alp"


def test_empty_alp_home_counts_as_unset() -> None:
    assert Path(default_home({"ALP_HOME": ""})) == Path.home() / ".alp"


def test_relative_alp_home_is_made_absolute() -> None:
    assert Path(default_home({"ALP_HOME": "rel"})) == Path.cwd() / "rel"


def test_socket_is_alp_socket_when_set(tmp_path: Path) -> None:
    env = {"ALP_SOCKET": str(tmp_path / "s.sock"), "XDG_RUNTIME_DIR": "/run/user/1"}
    assert Path(default_socket_path(env)) == tmp_path / "s.sock"


def test_socket_goes_under_xdg_runtime_dir() -> None:
    env = {"XDG_RUNTIME_DIR": "/run/user/1000"}
    assert Path(default_socket_path(env)) == Path("/run/user/1000/alp/alpd.sock")


def test_socket_falls_back_to_tmp_per_uid() -> None:
    assert Path(default_socket_path({})) == Path(f"/tmp/alp-{os.getuid()}/alpd.sock")


def test_relative_xdg_runtime_dir_is_ignored() -> None:
    env = {"XDG_RUNTIME_DIR": "run/user/1000"}
    assert Path(default_socket_path(env)) == Path(f"/tmp/alp-{os.getuid()}/alpd.sock")


def test_config_lives_in_the_home(tmp_path: Path) -> None:
    assert config_path(tmp_path) == tmp_path / "config.toml"


def test_missing_dir_is_created_0700_even_under_a_permissive_umask(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "alp"
    old = os.umask(0o000)
    try:
        assert ensure_private_dir(target) == target
    finally:
        os.umask(old)
    assert _mode(target) == 0o700


def test_mkdir_under_a_strict_umask_still_gives_the_owner_full_access(tmp_path: Path) -> None:
    old = os.umask(0o277)
    try:
        ensure_private_dir(tmp_path / "alp")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "alp") == 0o700


def test_existing_private_dir_is_accepted_unchanged(tmp_path: Path) -> None:
    target = tmp_path / "alp"
    target.mkdir(mode=0o700)
    (target / "keep").write_text("x")
    ensure_private_dir(target)
    assert (target / "keep").read_text() == "x"


@pytest.mark.parametrize("mode", [0o755, 0o750, 0o701, 0o710, 0o707])
def test_dir_with_group_or_other_bits_is_refused(tmp_path: Path, mode: int) -> None:
    target = tmp_path / "alp"
    target.mkdir()
    os.chmod(target, mode)
    with pytest.raises(UnsafeDirectory, match=rf"mode {mode:04o}.*chmod 700"):
        ensure_private_dir(target)
    assert _mode(target) == mode  # refused, not silently repaired


@pytest.mark.needs_root
@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")
def test_dir_owned_by_another_uid_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "alp"
    target.mkdir(mode=0o700)
    os.chown(target, NOBODY, NOBODY)
    with pytest.raises(UnsafeDirectory, match=rf"owned by uid {NOBODY}.*not by you"):
        ensure_private_dir(target)


def test_symlink_to_a_private_dir_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "alp"
    link.symlink_to(real)
    with pytest.raises(UnsafeDirectory, match="symlink"):
        ensure_private_dir(link)


def test_dangling_symlink_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    link = tmp_path / "alp"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(UnsafeDirectory, match="symlink"):
        ensure_private_dir(link)
    assert not (tmp_path / "elsewhere").exists()


def test_regular_file_in_the_way_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "alp"
    target.write_text("")
    with pytest.raises(UnsafeDirectory, match="not a directory"):
        ensure_private_dir(target)
