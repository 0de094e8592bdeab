"""SFT: supervised fine-tuning on an uploaded chat JSONL (``[algorithm] type = "offline"`` or ``[job]``).

The flow itself is ``flow.FLOW`` (what the registry loads); ``jobs.JOBS`` is how its jobs are found on a backend,
imported alone by what only finds or cancels a job (this package imports nothing, so neither pays for the
other).
"""
