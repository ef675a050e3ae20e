"""What the wheel installs: the three packages, a license, and none of our test machinery."""

from __future__ import annotations

import tomllib
from pathlib import Path

import setuptools

ROOT = Path(__file__).resolve().parents[2]


def _config() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_installed_packages_hold_no_test_machinery() -> None:
    find = _config()["tool"]["setuptools"]["packages"]["find"]  # type: ignore[index]
    packages = setuptools.find_packages(where=str(ROOT), include=find["include"])
    assert {p.split(".")[0] for p in packages} == {"alpd", "alpctl", "protocol"}
    modules = [
        path for package in packages for path in (ROOT / package.replace(".", "/")).glob("*.py")
    ]
    assert modules
    offenders = [
        str(path.relative_to(ROOT))
        for path in modules
        if "import pytest" in path.read_text() or path.stem in {"model_server", "conftest"}
    ]
    assert offenders == []
    # The one fixture kept for client authors: a daemon on a temporary home and socket.
    testing = sorted(p.name for p in (ROOT / "alpd" / "testing").glob("*.py"))
    assert testing == ["__init__.py", "daemon.py"]


def test_the_license_is_shipped() -> None:
    project = _config()["project"]
    assert project["license"] == "MIT"  # type: ignore[index]
    assert project["license-files"] == ["LICENSE"]  # type: ignore[index]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
