"""The learning-rate schedule both training loops use."""

from __future__ import annotations

import math

__all__ = ["lr_factor"]


def lr_factor(step: int, total: int, warmup: int) -> float:
    """Linear warm-up, then cosine decay to 10 % of the peak (late steps then cannot undo progress)."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
