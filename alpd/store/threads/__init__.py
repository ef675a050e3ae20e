"""The threads' SQL: their rows and revisions (`shell`), names (`refs`), the digest-chained
snapshots, compactions and checkpoints (`snapshots`), and the clears and undos (`steps`).

Every function takes the unit's `Tx` (or the `Store` for a read outside a unit) and returns
typed values: wire types, domain types, or the small records defined beside the query.
"""
