"""A real alpd for tests of alp and of tools built on it (`alpd.testing.daemon`).

    from alpd.testing.daemon import running_daemon

    with running_daemon(tmp_path) as d:     # a daemon on a temporary home and socket
        with d.client() as client:
            client.call("daemon/ping")
        d.cli("thread", "list", "--json")   # `alp` against it, as a user runs it

alp's own test infrastructure (the scripted model server, the e2e harnesses) lives under
`tests/` in the source tree and is not installed.
"""
