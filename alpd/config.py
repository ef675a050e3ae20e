"""Loading `config.toml` (agents and runtimes) from disk; the parsing itself is pure
(`alpd.domain.runs.agents`). A missing file means the built-in defaults; a file that cannot be
read as UTF-8 text (a directory, unreadable, other bytes) is a ConfigError naming it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

from alpd.domain.config_fields import ConfigError
from alpd.domain.runs.agents import AgentsConfig, default_config, parse_agents_config

#: a config.toml is a few KiB; anything this large is not one (and is not read whole)
MAX_CONFIG_BYTES = 1024 * 1024


def load_config(path: Path) -> AgentsConfig:
    """The agents config, or ConfigError naming the file, the line and what is wrong.

    Only a regular file is read (a symlink to one is fine), at most MAX_CONFIG_BYTES of it:
    a FIFO there blocked the reader for good (on the loop: the whole daemon), and a link to
    /dev/zero read until MemoryError. The FIFO is opened non-blocking, so even the open
    returns at once. Blocking IO all the same: callers run it in a worker thread."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return msgspec.structs.replace(default_config(), source=str(path))
    except IsADirectoryError:
        raise ConfigError(str(path), None, "is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot be read: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ConfigError(str(path), None, "is a directory, not a config file")
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(
                str(path),
                None,
                f"is not a regular file (a {_kind(st.st_mode)}); alpd reads config only from "
                "a regular file: replace it with one",
            )
        if st.st_size > MAX_CONFIG_BYTES:
            raise ConfigError(str(path), None, _too_large(st.st_size))
        with os.fdopen(os.dup(fd), "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot be read: {exc.strerror}") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_CONFIG_BYTES:  # it grew between fstat and read
        raise ConfigError(str(path), None, _too_large(len(raw)))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            str(path), line, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x}); TOML is UTF-8"
        ) from None
    return msgspec.structs.replace(parse_agents_config(text, source=str(path)), source=str(path))


def _too_large(size: int) -> str:
    return (
        f"is larger than {MAX_CONFIG_BYTES // 1024} KiB ({size} bytes); a config.toml is a few "
        "KiB: check that the path names the right file"
    )


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode):
        return "character device"
    if stat.S_ISBLK(mode):
        return "block device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"
