"""Where alpd keeps each run's files: `<home>/executions/<id>/`, 0700 under a 0700
`executions/` (what the run printed, its session context, its hook settings)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Paths:
    home: Path
    socket_path: Path

    def exec_dir(self, execution_id: str) -> Path:
        return self.home / "executions" / execution_id

    def make_exec_dir(self, execution_id: str) -> Path:
        """The run's directory, created 0700 under a 0700 `executions/`: it holds what the run
        printed and its session context. Modes are set exactly (mkdir's is filtered by the
        umask), and an `executions/` an older alpd left 0755 is tightened."""
        executions = self.home / "executions"
        executions.mkdir(mode=0o700, exist_ok=True)
        os.chmod(executions, 0o700)
        exec_dir = executions / execution_id
        exec_dir.mkdir(mode=0o700, exist_ok=True)
        os.chmod(exec_dir, 0o700)
        return exec_dir


__all__ = ["Paths"]
