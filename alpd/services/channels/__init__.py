"""The chat doors' state and the approval broker: pairing codes and the allow-list, poll
cursors, the thread each chat talks to, the one-time nonces of approval buttons, the
threads muted for notices.

May import alpd.domain, alpd.store, services.context, services.runs (who is calling:
only a run asks for an approval) and services.threads (a muted thread named as anywhere
else, and owned by the caller); never a door (the channels themselves live in alpd.channels).
"""
