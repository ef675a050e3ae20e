"""Schedules as data: when one fires next and what a late wake-up owes.

Pure: time is a parameter; imports nothing of alpd outside alpd.domain.
"""
