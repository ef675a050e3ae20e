"""The project's docs stand alone: nothing points outside the repository, and the README's
quickstart can be pasted line by line on a fresh clone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
THIS = Path(__file__).resolve()

#: what a reader outside the authors' own workspace cannot follow (spelled in pieces so this
#: file does not match itself)
OUTSIDE = ("../" + "shared", "DESIGN" + ".md", "DESIGN" + " §", "research" + "/", "§")


def _texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml"]
    for folder in ("docs", "alpd", "alpctl", "protocol", "tests", "bench", "systemd"):
        files += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in {".py", ".md", ".sh", ".toml", ".service", ".socket"}
        ]
    return [p for p in files if p.resolve() != THIS]


def test_nothing_refers_to_files_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _texts()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if any(marker in line for marker in OUTSIDE)
    ]
    assert found == []


def _quickstart() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_quickstart_installs_before_it_activates_and_backgrounds_nothing() -> None:
    commands = [c for c in _quickstart() if c]
    activate = commands.index("source .venv/bin/activate")
    before = commands[:activate]
    assert before, "something must create .venv before it is activated"
    assert not any(c.endswith("&") for c in before), before
    targets = set(re.findall(r"^([a-z][\w.-]*):", (ROOT / "Makefile").read_text(), re.M))
    for command in before:
        assert command.startswith("make "), command
        assert command.split()[1] in targets, command


def test_every_doc_the_readme_names_exists() -> None:
    readme = (ROOT / "README.md").read_text()
    for name in re.findall(r"`([\w-]+\.md)`", readme):
        assert (ROOT / "docs" / name).exists(), name
