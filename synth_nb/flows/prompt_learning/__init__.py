"""Prompt learning (GEPA, MIPRO): a prompt optimised against a task app (``[prompt_learning]``).

The flow itself is ``flow.FLOW`` (what the registry loads); ``jobs.JOBS`` is how its jobs are found on a backend,
imported alone by what only finds or cancels a job (this package imports nothing, so neither pays for the
other).
"""
