"""alp as users install it, for the benchmarks: a wheel in a venv of its own, bytecode compiled.

An editable checkout measures something users never run: its modules are found through the
editable finder, and under PYTHONDONTWRITEBYTECODE=1 (this machine's default) every CLI call
recompiles them. `installed()` builds a wheel of this checkout, installs it (with its
dependencies, through pip as configured) into a venv under ALP_BENCH_INSTALL (default
/tmp/alp-bench-install/<digest of the sources>), and runs compileall over it — what pip does
for a normal install when bytecode writing is not disabled (`installed("semantic")`: with
that extra too). The venv is reused while the
sources are unchanged (every file of the packages: modules, templates, the page's script and
stylesheet).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Installed", "installed"]

SOURCE = Path(__file__).resolve().parent.parent
ROOT = Path(os.environ.get("ALP_BENCH_INSTALL", "/tmp/alp-bench-install"))


@dataclass(frozen=True)
class Installed:
    """A venv holding alp from a wheel."""

    prefix: Path

    @property
    def python(self) -> str:
        return str(self.prefix / "bin" / "python")

    def script(self, name: str) -> str:
        return str(self.prefix / "bin" / name)


def _digest(extras: str) -> str:
    h = hashlib.sha256(extras.encode())
    for package in ("alpd", "alpctl", "protocol"):
        for path in sorted((SOURCE / package).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            h.update(str(path.relative_to(SOURCE)).encode())
            h.update(path.read_bytes())
    h.update((SOURCE / "pyproject.toml").read_bytes())
    return h.hexdigest()[:16]


def _run(*argv: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} failed:\n{done.stdout}\n{done.stderr}")


def installed(extras: str = "") -> Installed:
    """The venv of this checkout's wheel, with `extras` (e.g. "semantic") installed too."""
    target = Installed(ROOT / _digest(extras))
    if (target.prefix / ".complete").exists():
        return target
    shutil.rmtree(target.prefix, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="alp-wheel-") as wheels:
        # A copy without the checkout's venv and caches: the build sees only the sources.
        tree = Path(wheels) / "src"
        shutil.copytree(
            SOURCE,
            tree,
            ignore=shutil.ignore_patterns(".venv", ".git", "*_cache", "__pycache__", "*.egg-info"),
        )
        _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, str(tree))
        (wheel,) = Path(wheels).glob("alp-*.whl")
        _run(sys.executable, "-m", "venv", str(target.prefix))
        _run(
            target.python,
            "-m",
            "pip",
            "install",
            "--quiet",
            f"{wheel}[{extras}]" if extras else str(wheel),
        )
    _run(target.python, "-m", "compileall", "-q", str(target.prefix / "lib"))
    (target.prefix / ".complete").touch()
    return target
