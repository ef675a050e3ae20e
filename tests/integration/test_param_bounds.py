"""Valid-typed params that the OS or SQLite would reject are refused when the request is
decoded, as -32602 naming the field (or a named domain error where only the OS can tell),
never -32603 from deep inside a handler (issue 9, point 7)."""

from __future__ import annotations

from typing import Any

import pytest
from wire import RawConnection, error_of

from alpd.testing.daemon import DaemonProcess
from protocol import errors

LONG_CWD = "/" + "a" * 4095
PATH_100K = "/" + "p" * 100_000
#: under 4,096 characters and 255 a name, but each "é" is two bytes to the kernel
WIDE_CWD = "/" + "é" * 200


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("execution/attach", {"executionId": "exec_x", "pid": -1}, "pid"),
        ("execution/attach", {"executionId": "exec_x", "pid": 0}, "pid"),
        ("execution/attach", {"executionId": "exec_x", "pid": 2**31}, "pid"),
        (
            "execution/settle",
            {"executionId": "exec_x", "outcome": "completed", "exitCode": 2**53},
            "exitCode",
        ),
        (
            "execution/settle",
            {"executionId": "exec_x", "outcome": "failed", "summary": "s" * 300_000},
            "summary",
        ),
        ("thread/create", {"cwd": LONG_CWD}, "cwd"),
        ("thread/create", {"cwd": "relative/dir"}, "cwd"),
        ("thread/create", {"cwd": "/" + "n" * 256}, "cwd"),
        ("thread/create", {"title": "t" * 1_000_000}, "title"),
        ("thread/list", {"cwd": LONG_CWD}, "cwd"),
        ("history/import", {"runtime": "claude", "path": PATH_100K}, "path"),
        ("history/import", {"runtime": "claude", "path": "relative/sessions"}, "path"),
        ("thread/context", {"threadId": "thread_x", "revision": 2**63}, "revision"),
        ("execution/wait", {"executionId": "exec_x", "timeout": 1e300}, "timeout"),
    ],
)
def test_out_of_bounds_params_are_invalid_params_naming_the_field(
    alpd: DaemonProcess, method: str, params: dict[str, Any], field: str
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        error = error_of(conn.request(method, params))
    assert error["code"] == errors.INVALID_PARAMS, error
    assert error["data"] == {"field": field}, error


@pytest.mark.parametrize("method", ["thread/create", "thread/list"])
def test_a_cwd_the_kernel_finds_too_long_is_invalid_argument(
    alpd: DaemonProcess, method: str
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        error = error_of(conn.request(method, {"cwd": WIDE_CWD}))
    assert error["data"]["name"] == "INVALID_ARGUMENT", error
    assert error["data"]["field"] == "cwd"


def test_an_import_path_the_kernel_finds_too_long_is_invalid_argument(
    alpd: DaemonProcess,
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        error = error_of(conn.request("history/import", {"runtime": "codex", "path": WIDE_CWD}))
    assert error["data"]["name"] == "INVALID_ARGUMENT", error
    assert error["data"]["field"] == "path"


def test_params_at_their_bounds_are_served(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        created = conn.request("thread/create", {"title": "t" * 1024, "cwd": "/" + "n" * 255})
        assert "result" in created, created
        assert created["result"]["title"] == "t" * 1024
