"""The service-manager units: checked-in copies match the templates, systemd accepts them
(and rejects a broken one), the plist parses, install writes them atomically."""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from alpd.units import (
    LAUNCHD_LABEL,
    LAUNCHD_PLIST,
    LAUNCHD_SOCKET_NAME,
    SYSTEMD_UNITS,
    TEMPLATE_EXECUTABLE,
    install_units,
    render_units,
)

REPO_UNITS = Path(__file__).resolve().parents[2] / "systemd"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


def needs_systemd_analyze(test: Callable[..., None]) -> Callable[..., None]:
    """Skipped without systemd-analyze — and marked `systemd`, so under CI=true that skip is
    a failure (tests/ci_gate.py): the units' only real check must not pass by not running."""
    skip = pytest.mark.skipif(
        SYSTEMD_ANALYZE is None, reason="systemd-analyze not installed (make systemd)"
    )
    return pytest.mark.systemd(skip(test))


def _fake_alpd(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    exe = directory / "alpd"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return exe


def _verify(tmp_path: Path, units: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze --user verify` on `units`; it exits 0 on mere warnings, so callers
    also look at stderr."""
    assert SYSTEMD_ANALYZE is not None
    unit_dir = tmp_path / "units"
    unit_dir.mkdir(exist_ok=True)
    for name, text in units.items():
        (unit_dir / name).write_text(text)
    runtime_dir = tmp_path / "run"
    runtime_dir.mkdir(mode=0o700, exist_ok=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
    env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    return subprocess.run(
        [SYSTEMD_ANALYZE, "--user", "verify", "--man=no", *(str(unit_dir / n) for n in units)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _systemd_units(exe: str) -> dict[str, str]:
    rendered = render_units(exe)
    return {name: rendered[name] for name in SYSTEMD_UNITS}


@pytest.mark.parametrize("name", [*SYSTEMD_UNITS, LAUNCHD_PLIST])
def test_checked_in_copy_is_the_rendered_template(name: str) -> None:
    assert (REPO_UNITS / name).read_text() == render_units(TEMPLATE_EXECUTABLE)[name], (
        f"systemd/{name} drifted from alpd/units.py; regenerate it from render_units()"
    )


def test_service_carries_the_contract_settings() -> None:
    service = render_units("/opt/alp/bin/alpd")["alpd.service"]
    for line in (
        "Type=notify",
        "NotifyAccess=main",
        "WatchdogSec=30",
        "Restart=on-failure",
        "KillMode=process",
        "ExecStart=/opt/alp/bin/alpd",
    ):
        assert f"\n{line}\n" in service
    # Agents inherit these: they would lose the user's files, the network, node's JIT.
    for crippling in (
        "ProtectSystem",
        "ProtectHome",
        "PrivateTmp",
        "RestrictAddressFamilies",
        "MemoryDenyWriteExecute",
    ):
        assert f"\n{crippling}=" not in service


def test_socket_is_private_under_the_runtime_dir() -> None:
    socket_unit = render_units("/x/alpd")["alpd.socket"]
    for line in ("ListenStream=%t/alp/alpd.sock", "SocketMode=0600", "DirectoryMode=0700"):
        assert f"\n{line}\n" in socket_unit


def test_path_with_a_space_is_quoted_in_exec_start() -> None:
    service = render_units("/Users/a b/venv/bin/alpd")["alpd.service"]
    assert '\nExecStart="/Users/a b/venv/bin/alpd"\n' in service


@pytest.mark.parametrize("bad", ['/a"b/alpd', "/a$HOME/alpd", "/a\\b/alpd", "/a\nb/alpd"])
def test_path_that_exec_start_cannot_carry_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="ExecStart"):
        render_units(bad)


@needs_systemd_analyze
def test_systemd_accepts_the_units_with_a_real_executable(tmp_path: Path) -> None:
    exe = _fake_alpd(tmp_path / "bin with space")
    result = _verify(tmp_path, _systemd_units(str(exe)), home=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


@needs_systemd_analyze
def test_systemd_accepts_the_checked_in_units_with_alpd_in_dot_local(tmp_path: Path) -> None:
    _fake_alpd(tmp_path / ".local" / "bin")
    units = {name: (REPO_UNITS / name).read_text() for name in SYSTEMD_UNITS}
    result = _verify(tmp_path, units, home=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


@needs_systemd_analyze
@pytest.mark.parametrize(
    ("old", "new", "complaint"),
    [
        ("Type=notify", "Type=notifyy", "Failed to parse service type, ignoring: notifyy"),
        (
            "KillMode=process",
            "KillMode=sometimes",
            "Failed to parse kill mode specification, ignoring: sometimes",
        ),
        ("WatchdogSec=30", "WatchdogSec=thirty", "Failed to parse sec value, ignoring: thirty"),
        (
            "[Service]",
            "[Service]\nNoSuchSetting=1",
            "Unknown key 'NoSuchSetting' in section [Service]",
        ),
    ],
)
def test_verify_catches_a_broken_service(
    tmp_path: Path, old: str, new: str, complaint: str
) -> None:
    exe = _fake_alpd(tmp_path / "bin")
    units = _systemd_units(str(exe))
    assert old in units["alpd.service"]
    units["alpd.service"] = units["alpd.service"].replace(old, new)
    result = _verify(tmp_path, units, home=tmp_path)
    # systemd-analyze exits 0 on what it ignores; the complaint names the broken line.
    assert "alpd.service:" in result.stderr and complaint in result.stderr, result.stderr


@needs_systemd_analyze
def test_verify_catches_a_missing_executable(tmp_path: Path) -> None:
    result = _verify(tmp_path, _systemd_units(str(tmp_path / "nope" / "alpd")), home=tmp_path)
    assert result.returncode != 0


def test_plist_parses_and_describes_a_socket_activated_agent() -> None:
    agent = plistlib.loads(
        render_units("/opt/alp/bin/alpd", home="/Users/me", launchd_socket="/tmp/alp-501/s")[
            LAUNCHD_PLIST
        ].encode()
    )
    assert agent["Label"] == LAUNCHD_LABEL
    assert agent["ProgramArguments"] == ["/opt/alp/bin/alpd"]
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["AbandonProcessGroup"] is True
    sock = agent["Sockets"][LAUNCHD_SOCKET_NAME]
    assert sock["SockPathName"] == agent["EnvironmentVariables"]["ALP_SOCKET"] == "/tmp/alp-501/s"
    assert sock["SockPathMode"] == 384 == 0o600
    assert agent["StandardOutPath"] == agent["StandardErrorPath"]
    assert agent["StandardErrorPath"] == "/Users/me/Library/Logs/alp/alpd.log"


def test_install_on_linux_writes_both_units_0644(tmp_path: Path) -> None:
    target = tmp_path / ".config" / "systemd" / "user"
    written = install_units(target, "/opt/alp/bin/alpd", platform="linux")
    assert written == [target / "alpd.service", target / "alpd.socket"]
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert path.read_text() == render_units("/opt/alp/bin/alpd")[path.name]
    assert sorted(p.name for p in target.iterdir()) == ["alpd.service", "alpd.socket"]


def test_install_replaces_an_older_unit(tmp_path: Path) -> None:
    (tmp_path / "alpd.service").write_text("old")
    install_units(tmp_path, "/new/alpd", platform="linux")
    assert "ExecStart=/new/alpd\n" in (tmp_path / "alpd.service").read_text()


def test_install_on_macos_writes_the_plist_and_the_log_dir(tmp_path: Path) -> None:
    target = tmp_path / "Library" / "LaunchAgents"
    written = install_units(target, "/opt/alp/bin/alpd", platform="darwin", home=tmp_path)
    assert written == [target / LAUNCHD_PLIST]
    agent = plistlib.loads(written[0].read_bytes())
    assert agent["StandardErrorPath"] == f"{tmp_path}/Library/Logs/alp/alpd.log"
    assert "%" not in written[0].read_text()
    assert (tmp_path / "Library" / "Logs" / "alp").is_dir()


def test_install_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install_units(tmp_path, "/opt/alp/bin/alpd", platform=sys.platform)
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("bad", ["alpd", "relative/alpd", "/odd%h/alpd"])
def test_install_refuses_a_path_systemd_would_misread(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ValueError, match="absolute"):
        install_units(tmp_path, bad, platform="linux")
    assert list(tmp_path.iterdir()) == []


def test_install_refuses_an_unknown_platform(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="win32"):
        install_units(tmp_path, "/opt/alp/bin/alpd", platform="win32")


def test_install_units_writes_the_path_of_the_alpd_that_was_run(tmp_path: Path) -> None:
    """Not the first `alpd` on PATH: a decoy earlier on PATH must not end up in the unit."""
    decoy_dir, chosen_dir = tmp_path / "decoy", tmp_path / "chosen"
    decoy_dir.mkdir()
    chosen_dir.mkdir()
    (decoy_dir / "alpd").write_text("#!/bin/sh\nexit 0\n")
    (decoy_dir / "alpd").chmod(0o755)
    installed = Path(sys.executable).parent / "alpd"
    (chosen_dir / "alpd").symlink_to(installed)
    env = {**os.environ, "PATH": f"{decoy_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [str(chosen_dir / "alpd"), "install-units", "--target", str(tmp_path / "units")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    unit = (tmp_path / "units" / "alpd.service").read_text()
    assert f"ExecStart={chosen_dir / 'alpd'}" in unit
    assert str(decoy_dir) not in unit
