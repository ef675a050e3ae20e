"""History as data: pure readers of the runtimes' native transcripts.

Pure: no IO, no clock; may import alpd.domain.secrets only.
"""
