"""A stand-in `claude` that spends for ever: one response every 0.2 s, 1,000 input and 100
output tokens each (0.003 USD at `PRICES`), written to the transcript where the real one
writes it (`$CLAUDE_CONFIG_DIR/projects/<cwd made a name>/<session>.jsonl`), with no
subscription window (as the real one reports none offline). The budget and run-limit tests
watch alpd stop it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

#: the `[runtimes.claude]` prices under which each response costs 0.003 USD
PRICES: Final = 'prices = { "stand-in" = { input = 2.0, output = 10.0 } }'

_SCRIPT: Final = """#!{python}
import json, os, re, sys, time, uuid
from pathlib import Path
args = sys.argv[1:]
session = args[args.index("--session-id") + 1]
folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / re.sub(
    r"[^A-Za-z0-9]", "-", os.path.realpath(os.getcwd()))
folder.mkdir(parents=True, exist_ok=True)
transcript = folder / (session + ".jsonl")
n = 0
while True:
    n += 1
    line = {{"type": "assistant", "uuid": str(uuid.uuid4()), "sessionId": session,
             "timestamp": "2026-11-30T05:00:00.000Z",
             "message": {{"model": "stand-in",
                         "content": [{{"type": "text", "text": "step %d" % n}}],
                         "usage": {{"input_tokens": 1000, "output_tokens": 100}}}}}}
    with transcript.open("a") as f:
        f.write(json.dumps(line) + "\\n")
    time.sleep(0.2)
"""


def spending_claude(path: Path) -> Path:
    """The stand-in written at `path` (executable); `path` back."""
    path.write_text(_SCRIPT.format(python=sys.executable))
    path.chmod(0o755)
    return path
