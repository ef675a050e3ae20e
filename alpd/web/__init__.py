"""The web page alpd serves on 127.0.0.1: one more door into the same threads.

One module per job: `server` (listening inside the daemon's event loop), `guard` (Host,
cookie, Origin, security headers), `login` (the token and one-time codes), `door` (the
socket's handlers, called as the owner), `pages` and `actions` (GET and POST), `stream`
(server-sent events), `view` (pure formatting), `render` (the templates). The thin client
never imports any of it: `alp web` only calls `web/open` on the socket.
"""
