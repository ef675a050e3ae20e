"""Conversation as data: deliveries and their envelopes, handoffs, loop guards, reports.

Pure: no IO, no clock; may import alpd.domain's other packages.
"""
