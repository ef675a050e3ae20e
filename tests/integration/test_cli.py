"""The client as a person meets it, against a real daemon: global options anywhere, no
traceback on Ctrl-C or a closed pipe, a headless run's output, and output meant for people."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from daemons import cli_json

from alpd.testing.daemon import DaemonProcess


def headless(d: DaemonProcess, cwd: Path, *command: str) -> dict[str, Any]:
    thread = cli_json(d, "thread", "create", cwd=cwd)
    started = d.call(
        "thread/continue",
        {
            "threadId": thread["id"],
            "runtime": "command",
            "headless": True,
            "args": list(command),
            "cwd": str(cwd),
        },
    )
    assert isinstance(started, dict)
    return started


def test_the_socket_before_the_command_is_the_one_used(alpd: DaemonProcess, tmp_path: Path) -> None:
    """Another daemon's socket in the environment must not win over `--socket`."""
    env = {"ALP_SOCKET": str(tmp_path / "nobody.sock"), "ALP_NO_AUTOSTART": "1"}
    for argv in (
        ["--socket", str(alpd.socket_path), "thread", "list", "--json"],
        ["--socket", str(alpd.socket_path), "--json", "ping"],
        ["--json", "ping", "--socket", str(alpd.socket_path)],
    ):
        done = alpd.cli(*argv, cwd=str(tmp_path), extra_env=env)
        assert done.returncode == 0, (argv, done.stderr)
        json.loads(done.stdout)
    unreachable = alpd.cli("--json", "ping", extra_env=env)
    assert unreachable.returncode == 3
    assert "nobody.sock" in unreachable.stderr


def test_a_closed_pipe_ends_quietly(alpd: DaemonProcess, tmp_path: Path) -> None:
    cli_json(alpd, "thread", "create", "--title", "one", cwd=tmp_path)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before alp writes: `alp thread list | head -0`
    try:
        done = subprocess.run(
            [sys.executable, "-m", "alpctl", "thread", "list"],
            env=alpd.env,
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 141


def test_ctrl_c_while_waiting_says_the_run_goes_on_and_how_to_follow_it(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    thread = cli_json(alpd, "thread", "create", cwd=tmp_path)
    argv = ["thread", "continue", thread["id"], "--runtime", "command", "--headless", "--wait"]
    waiting = subprocess.Popen(
        [sys.executable, "-m", "alpctl", *argv, "--", "sleep", "60"],
        env=alpd.env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        busy = None
        while busy is None and time.monotonic() < deadline:
            shown = alpd.call("thread/show", {"threadId": thread["id"]})
            assert isinstance(shown, dict)
            busy = shown["thread"].get("busyRoot")
            if busy is None:
                time.sleep(0.05)
        assert busy, "the root never started"
        waiting.send_signal(signal.SIGINT)
        _out, err = waiting.communicate(timeout=30)
    finally:
        waiting.kill()
    assert waiting.returncode == 130
    assert "Traceback" not in err
    assert f"{busy} goes on" in err
    assert f"alp execution logs {busy} -f" in err
    execution = alpd.call("execution/show", {"executionId": busy})
    assert isinstance(execution, dict) and execution["status"] == "running"
    alpd.call("execution/cancel", {"executionId": busy})


def test_execution_logs_show_what_a_headless_run_printed(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    script = f"echo first line; echo to stderr >&2; echo token {token}; printf 'no newline'"
    started = headless(alpd, tmp_path, "sh", "-c", script)
    execution_id = started["execution"]["id"]
    alpd.call("execution/wait", {"executionId": execution_id, "timeout": 30})
    done = alpd.cli("execution", "logs", execution_id, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("first line\ntoken ")
    assert done.stdout.endswith("no newline")
    assert token not in done.stdout  # secrets filtered on the way out
    assert done.stderr == "to stderr\n"
    as_json = cli_json(alpd, "execution", "logs", execution_id, cwd=tmp_path)
    assert as_json["settled"] is True and as_json["headless"] is True
    assert as_json["stdoutOffset"] == len(f"first line\ntoken {token}\nno newline")


def test_follow_streams_the_output_until_the_run_settles(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    thread = cli_json(alpd, "thread", "create", cwd=tmp_path)
    script = "for i in 1 2 3; do echo line $i; sleep 0.2; done; exit 4"
    done = alpd.cli(
        "thread", "continue", thread["id"], "--runtime", "command", "--headless", "--follow",
        "--", "sh", "-c", script, cwd=str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("line 1\nline 2\nline 3\n")
    assert "failed" in done.stdout


def test_a_thread_list_for_people_shows_local_times_and_no_colour_off_a_terminal(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    thread = cli_json(alpd, "thread", "create", "--title", "t", cwd=tmp_path)
    done = alpd.cli("thread", "list", cwd=str(tmp_path), extra_env={"TZ": "Asia/Kolkata"})
    assert done.returncode == 0
    assert "\x1b[" not in done.stdout
    assert " IST " in done.stdout, done.stdout
    assert done.stdout.startswith(thread["id"])  # no header when piped


def test_nothing_listed_says_which_filter(alpd: DaemonProcess, tmp_path: Path) -> None:
    done = alpd.cli("thread", "list", "--closed", cwd=str(tmp_path))
    assert done.returncode == 0
    assert f"no open or closed threads in {tmp_path}" in done.stdout


def test_pin_without_text_explains_the_double_dash(alpd: DaemonProcess, tmp_path: Path) -> None:
    done = alpd.cli("context", "pin", "decision", cwd=str(tmp_path))
    assert done.returncode == 2
    assert "alp context pin decision -- " in done.stderr


def test_search_in_a_thread_that_does_not_exist_is_thread_not_found(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    done = alpd.cli("search", "pricing", "--thread", "thread_nosuch", "--json", cwd=str(tmp_path))
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["name"] == "THREAD_NOT_FOUND"
    thread = cli_json(alpd, "thread", "create", cwd=tmp_path)
    empty = alpd.cli("search", "pricing", "--thread", thread["id"], "--since", "7d")
    assert empty.returncode == 0
    assert f"no matches for 'pricing' with --thread {thread['id']} --since " in empty.stdout


def test_a_reply_alp_cannot_read_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """Whatever goes wrong, a person sees a line of text (ALP_DEBUG=1 shows the traceback)."""
    import socket
    import threading

    path = tmp_path / "garbled.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)

    def serve() -> None:
        for _ in range(2):
            conn, _addr = server.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"this is not json\n")

    threading.Thread(target=serve, daemon=True).start()
    env = {**os.environ, "ALP_NO_AUTOSTART": "1"}
    argv = [sys.executable, "-m", "alpctl", "--socket", str(path), "ping"]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("alp: unexpected JSONDecodeError")
    debug = subprocess.run(
        argv, env={**env, "ALP_DEBUG": "1"}, capture_output=True, text=True, timeout=60
    )
    assert "Traceback" in debug.stderr
    server.close()


def test_logs_print_all_of_an_output_larger_than_one_read(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    size = 2_500_000  # the daemon returns at most 1 MiB per call
    started = headless(alpd, tmp_path, "sh", "-c", f"yes line | head -c {size}")
    execution_id = started["execution"]["id"]
    alpd.call("execution/wait", {"executionId": execution_id, "timeout": 60})
    done = alpd.cli("execution", "logs", execution_id, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) == size
    as_json = cli_json(alpd, "execution", "logs", execution_id, cwd=tmp_path)
    assert as_json["stdoutOffset"] == size and len(as_json["stdout"]) == size
