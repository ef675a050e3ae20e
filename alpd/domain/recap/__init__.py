"""Recaps as data: the [recap] config, the gate (single flight, back-off), what a summariser is
sent and what is kept.

Pure: time is a parameter; may import alpd.domain's other packages.
"""
