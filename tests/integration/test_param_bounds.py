"""Valid-typed params that the OS or SQLite would reject are refused when the request is
decoded, as -32602 naming the field (or a named domain error where only the OS can tell),
never -32603 from deep inside a handler (issue 9, point 7)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from daemons import settled, start_headless
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


#: offsets a client can send that no log file reaches: beyond the end, beyond what `seek`
#: takes (2**63 is what the fuzz run sent), beyond a JSON-safe integer
HUGE_OFFSETS = [10**6, 2**53 - 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1]


@pytest.mark.parametrize("offset", HUGE_OFFSETS)
@pytest.mark.parametrize("field", ["stdoutOffset", "stderrOffset"])
def test_a_log_offset_past_the_end_is_a_named_error_never_internal(
    alpd: DaemonProcess, tmp_path: Path, field: str, offset: int
) -> None:
    thread = alpd.call("thread/create", {"cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    execution = start_headless(alpd, thread["id"], tmp_path, ["sh", "-c", "echo out; echo err >&2"])
    settled(alpd, execution["id"])
    with RawConnection(alpd.socket_path) as conn:
        reply = conn.request("execution/logs", {"executionId": execution["id"], field: offset})
    error = error_of(reply)
    assert error["code"] != errors.INTERNAL_ERROR, error
    if error["code"] == errors.INVALID_PARAMS:
        assert error["data"] == {"field": field}, error
    else:
        assert error["data"]["name"] == "INVALID_ARGUMENT", error
        assert error["data"]["field"] == field, error
        assert "offset" in error["message"], error


def test_a_log_offset_at_the_end_reads_nothing_and_stays(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    thread = alpd.call("thread/create", {"cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    execution = start_headless(alpd, thread["id"], tmp_path, ["sh", "-c", "echo out"])
    settled(alpd, execution["id"])
    read = alpd.call("execution/logs", {"executionId": execution["id"], "stdoutOffset": 4})
    assert isinstance(read, dict)
    assert read["stdout"] == "" and read["stdoutOffset"] == 4


@pytest.mark.parametrize(
    "every", ["99999999999d", "99999999999w", "9" * 200 + "s", "1000000000h", "3651d"]
)
def test_an_interval_too_long_for_a_calendar_is_schedule_invalid(
    alpd: DaemonProcess, tmp_path: Path, every: str
) -> None:
    thread = alpd.call("thread/create", {"cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    with RawConnection(alpd.socket_path) as conn:
        reply = conn.request(
            "schedule/create", {"threadId": thread["id"], "prompt": "p", "every": every}
        )
    error = error_of(reply)
    assert error["data"]["name"] == "SCHEDULE_INVALID", error
    assert error["data"]["field"] == "every", error
    assert "at most" in error["message"], error


@pytest.mark.parametrize(
    "at", ["9999-12-31T23:59:59", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00+14:00"]
)
def test_a_time_at_the_calendars_edge_is_schedule_invalid(
    alpd: DaemonProcess, tmp_path: Path, at: str
) -> None:
    thread = alpd.call("thread/create", {"cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    with RawConnection(alpd.socket_path) as conn:
        reply = conn.request(
            "schedule/create",
            {"threadId": thread["id"], "prompt": "p", "at": at, "timezone": "Pacific/Kiritimati"},
        )
    if "result" in reply:  # a far but representable time is a valid one-off schedule
        return
    error = error_of(reply)
    assert error["data"]["name"] == "SCHEDULE_INVALID", error
