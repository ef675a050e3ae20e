"""Memory across threads, as pure rules: the record of a memory's versions and their digest
chain (`record`), which memories a new root is given and in what order (`selection`), and the
section of `session-context.md` that carries them (`render`); `[memory]` in config.toml
(`settings`).

May import alpd.domain.canonical, alpd.domain.secrets, alpd.domain.threads.session_context and
alpd.errors; never IO, never the clock (time is a parameter).
"""
