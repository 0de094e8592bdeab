"""The optimisation curve as PNG bytes (matplotlib's Agg canvas: no display, no pyplot global state)."""

from __future__ import annotations

import io

__all__ = ["curve_png"]


def curve_png(trials: list[tuple[int, float]], best: list[tuple[int, float]], *, title: str,
              baseline: float | None = None) -> bytes | None:
    """Trial scores as dots and the best-so-far as a step line against rollouts; None when empty."""
    if not trials and not best:
        return None
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 3.6), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if trials:
        ax.scatter([x for x, _ in trials], [y for _, y in trials], s=12, alpha=0.45, color="#7f8c8d",
                   label="trial (minibatch) score")
    if best:
        ax.step([x for x, _ in best], [y for _, y in best], where="post", color="#2e86de", linewidth=2,
                label="best validation score")
    if baseline is not None:
        ax.axhline(baseline, color="#e67e22", linestyle="--", linewidth=1, label="baseline")
    ax.set_xlabel("rollouts")
    ax.set_ylabel("score")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
