"""The fuzzers' budget: a fixed number of examples per property in CI, scaled up by `make fuzz`.

`ALP_FUZZ_SCALE` multiplies every property's `max_examples` (default 1, what `make test` and
CI run); `make fuzz` sets it to 50 for a longer run. Each test names its base budget with
`examples(n)`, so the ratio between the properties stays the same at every scale.
"""

from __future__ import annotations

import os

SCALE = max(1, int(os.environ.get("ALP_FUZZ_SCALE", "1") or "1"))


def examples(base: int) -> int:
    return base * SCALE
