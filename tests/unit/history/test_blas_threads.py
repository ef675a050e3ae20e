"""numpy is imported by the meaning index with its BLAS on one thread (docs/search.md), and
the variables that ask for it do not stay in alpd's environment for the runs it starts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("numpy")

PROBE = """
import json, os
from alpd.services.history.embedders import BLAS_THREADS, _import_numpy
before = len(os.listdir("/proc/self/task"))
_import_numpy()
import numpy as np
np.ones((2000, 256), dtype=np.float32) @ np.ones(256, dtype=np.float32)
print(json.dumps({
    "threads": len(os.listdir("/proc/self/task")) - before,
    "left": [name for name in BLAS_THREADS if name in os.environ],
}))
"""


def test_numpy_is_imported_with_one_blas_thread_and_the_environment_is_restored() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    assert found == {"threads": 0, "left": []}
