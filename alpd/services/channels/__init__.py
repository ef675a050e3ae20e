"""The chat doors' state and the approval broker: pairing codes and the allow-list, poll
cursors, the thread each chat talks to, the one-time nonces of approval buttons.

May import alpd.domain, alpd.store, services.context and services.runs (who is calling:
only a run asks for an approval); never a door (the channels themselves live in alpd.channels).
"""
