"""``compare([job_or_id, ...])``: runs side by side, whatever their flows.

``Comparison`` holds the runs, their curves and tables; it shows itself as one static HTML output (a
saved notebook keeps it), and gives the same numbers as DataFrames (``df``, ``config_df()``,
``curves_df()``), Markdown and text.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from synth_nb.comparison.curves import AXES, Axis, Curve, curves_of
from synth_nb.comparison.plot import SCALES, Scale, chart_png, missing_from, scale_for, x_label
from synth_nb.comparison.render import comparison_html, comparison_markdown, comparison_text
from synth_nb.comparison.runs import Run, load_runs
from synth_nb.comparison.table import compared_keys, config_differences, run_row
from synth_nb.errors import ConfigError

__all__ = ["DEFAULT_RUNS", "Comparison", "compare", "compare_request", "default_runs"]

#: ``--compare`` without ids: how many of the latest runs of one flow it overlays
DEFAULT_RUNS = 8


@dataclass
class Comparison:
    """Several runs compared: curves per flow metric, final metrics, differing config keys."""

    runs: list[Run]
    curves: list[Curve]
    problems: list[str] = field(default_factory=list)
    #: the progress axis shown first ("steps", "rollouts" or "seconds")
    axis: Axis = "steps"
    _pngs: dict[tuple[Axis, Scale], bytes | None] = field(default_factory=dict, repr=False)
    #: the x axis: "linear", "log", "fraction" (each run's own, 0 to 1), or "auto" (log when the runs' lengths
    #: differ 20 times or more, per axis)
    scale: Scale | Literal["auto"] = "auto"
    _rows: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def title(self) -> str:
        flows = sorted({r.flow_label for r in self.runs})
        count = f"{len(self.runs)} run{'s' * (len(self.runs) != 1)}"
        return f"Comparison of {count} ({', '.join(flows) or 'none'})"

    def rows(self) -> list[dict[str, Any]]:
        """One row per run (computed once: the HTML, its charts' alt texts and the text tables each read them)."""
        if self._rows is None:
            self._rows = [run_row(run, self.curves) for run in self.runs]
        return [dict(row) for row in self._rows]

    def differences(self) -> list[tuple[str, list[Any]]]:
        return config_differences(self.runs)

    def sources(self) -> list[str]:
        """What each run's keys were read from: "submitted plan" (its bundle), "file" or "backend"."""
        return ["submitted plan" if r.sent and compared_keys(r, self.runs) is r.sent else r.config_source
                for r in self.runs]

    @property
    def df(self) -> Any:
        """One row per run: headline metric (final, best), steps, rollouts, tokens, duration, differing keys."""
        import pandas as pd

        frame = pd.DataFrame(self.rows())
        for key, values in self.differences():
            frame[f"config.{key}"] = [v if isinstance(v, str | int | float | bool) else str(v) for v in values]
        return frame

    def config_df(self) -> Any:
        """Differing config keys (rows) × runs (columns)."""
        import pandas as pd

        diffs = self.differences()
        return pd.DataFrame({r.label: [vals[i] for _, vals in diffs] for i, r in enumerate(self.runs)},
                            index=[k for k, _ in diffs])

    def curves_df(self) -> Any:
        """Every plotted point, long form: run, panel, line ("raw" or "best"), step, rollouts, seconds, value."""
        import pandas as pd

        rows = [{"run": c.run.label, "job_id": c.run.job_id, "panel": c.panel, "line": line, "step": s.steps[i],
                 "rollouts": s.rollouts[i], "seconds": s.seconds[i], "value": s.values[i]}
                for c in self.curves for line, s in (("raw", c.raw), ("best", c.best)) for i in range(len(s))]
        return pd.DataFrame(rows, columns=["run", "job_id", "panel", "line", "step", "rollouts", "seconds", "value"])

    def scale_on(self, axis: Axis) -> Scale:
        """How the x axis of ``axis`` is scaled (``auto`` resolved)."""
        return scale_for(self.curves, axis) if self.scale == "auto" else self.scale

    def png(self, axis: Axis | None = None) -> bytes | None:
        """The overlaid curves on ``axis`` (default: ``self.axis``) as PNG bytes."""
        axis = axis or self.axis
        if axis not in AXES:
            raise ConfigError(f"unknown progress axis {axis!r}; use one of {', '.join(AXES)}")
        key = (axis, self.scale_on(axis))
        if key not in self._pngs:
            self._pngs[key] = chart_png(self.curves, self.runs, axis, scale=key[1])
        return self._pngs[key]

    def with_axis(self, axis: Axis) -> Comparison:
        """The same comparison showing ``axis`` first."""
        if axis not in AXES:
            raise ConfigError(f"unknown progress axis {axis!r}; use one of {', '.join(AXES)}")
        return Comparison(self.runs, self.curves, self.problems, axis, self._pngs, self.scale, self._rows)

    def with_scale(self, scale: Scale | Literal["auto"]) -> Comparison:
        """The same comparison with its x axes ``scale``d: "linear", "log", "fraction" or "auto"."""
        if scale != "auto" and scale not in SCALES:
            raise ConfigError(f"unknown x scale {scale!r}; use one of auto, {', '.join(SCALES)}")
        return Comparison(self.runs, self.curves, self.problems, self.axis, self._pngs, scale, self._rows)

    def _alt(self, axis: Axis) -> str:
        parts = [f"{x_label(axis, self.scale_on(axis))}:"] + [f"{r['run']} {r['metric']} final {r['final']:.4g}, best {r['best']:.4g};"
                                      for r in self.rows() if r["final"] is not None and r["best"] is not None]
        missing = missing_from(self.curves, self.runs, axis)
        if missing:
            parts.append("not on this axis: " + ", ".join(r.label for r in missing))
        return " ".join(parts)

    def to_html(self) -> str:
        charts = {a: (png, self._alt(a)) for a in AXES if (png := self.png(a)) is not None}
        return comparison_html(self.title, self.rows(), self.differences(), [r.label for r in self.runs],
                               self.sources(), charts, self.problems, self.axis)

    def to_markdown(self) -> str:
        return comparison_markdown(self.title, self.rows(), self.differences(), [r.label for r in self.runs],
                                   self.problems)

    def to_text(self) -> str:
        return comparison_text(self.title, self.rows(), self.differences(), [r.label for r in self.runs],
                               self.problems)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """HTML and the terminal's text tables; ``to_markdown()`` for exports."""
        return {"text/html": self.to_html(), "text/plain": self.to_text()}

    def __repr__(self) -> str:
        return f"Comparison({', '.join(r.label for r in self.runs)})"


def compare(runs: Iterable[Any] | None = None, *, folder: str | Path | None = None, backend: str | None = None,
            env_files: Sequence[str | Path] = (), axis: Axis = "steps",
            scale: Scale | Literal["auto"] = "auto") -> Comparison:
    """Compare ``runs`` (``Job`` objects and/or job ids; None: every job started from ``folder``).

    Job ids are fetched from the backend the folder's registry (``.synth_nb/jobs.json``) says they went
    to, else from ``backend`` (a URL or ``"local"``), else ``SYNTH_BACKEND_OVERRIDE`` / the hosted default;
    ``SYNTH_API_KEY`` is resolved as for every command (``env_files`` first). A run that cannot be
    fetched is named in the comparison's notes instead of failing the rest. ``scale``: the x axis, "linear",
    "log", "fraction" (each run's own 0–1) or "auto" (log when the runs' lengths differ 20 times or more).
    """
    from synth_nb.pipeline import SecretSources

    where = Path(folder) if folder is not None else Path.cwd()
    sources = SecretSources(env_files=tuple(Path(p) for p in env_files), environ=dict(os.environ), cwd=where)
    loaded, problems = load_runs(runs, folder=where, backend=backend, sources=sources)
    if not loaded and not problems:
        raise ConfigError(f"nothing to compare: no job ids given and no jobs in {where / '.synth_nb' / 'jobs.json'}",
                          hint="pass job ids or Job objects: synth_nb.compare([job_a, 'pl_…'])")
    curves = [c for run in loaded for c in curves_of(run)]
    return Comparison(loaded, curves, problems, axis).with_scale(scale)


def default_runs(records: Sequence[Any], limit: int = DEFAULT_RUNS) -> tuple[list[str], list[str]]:
    """What ``--compare`` without ids compares: the last ``limit`` runs of the flow of the newest job in
    ``records`` (a folder's registry), oldest first, and a note saying which were left out and how to add them.

    Eleven runs of three flows overlaid are unreadable; the runs of one flow, the latest, are what a user
    just made.
    """
    ordered = sorted(records, key=lambda r: r.submitted_at)  # stable: same-second jobs keep their order
    if not ordered:
        return [], []
    flow = ordered[-1].flow
    same = [r.job_id for r in ordered if r.flow == flow]
    chosen, older = same[-limit:], same[:-limit]
    others: dict[str, list[str]] = {}
    for record in ordered:
        if record.flow != flow:
            others.setdefault(record.flow, []).append(record.job_id)
    if not older and not others:
        return chosen, []
    left = [f"{len(older)} older {flow} run{'s' * (len(older) != 1)} ({_ids(older)})"] if older else []
    left += [f"{len(ids)} {name} run{'s' * (len(ids) != 1)} ({_ids(ids)})" for name, ids in others.items()]
    return chosen, [f"Comparing the last {len(chosen)} {flow} run{'s' * (len(chosen) != 1)} started from this "
                    f"folder; left out: {'; '.join(left)}. To include any, name the runs: --compare ID ID … "
                    "(in Python: synth_nb.compare([...]))."]


def _ids(ids: Sequence[str], shown: int = 6) -> str:
    return ", ".join(ids[-shown:]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def compare_request(request: Any) -> Comparison:
    """``--compare [ID ...]`` of a door's request (``synth_nb.pipeline.request.Request``): the ids given, else
    the last runs of one flow started from its folder (``default_runs``).

    Here rather than among the pipeline's actions: comparing reads jobs through the pipeline, so the
    pipeline does not import it back.
    """
    from synth_nb.job import JobRegistry

    ids, notes = ((list(request.compare), []) if request.compare
                  else default_runs(JobRegistry(request.folder).list(), DEFAULT_RUNS))
    comparison = compare(ids or None, folder=request.folder, backend=request.backend, env_files=request.env_files)
    comparison.problems[:0] = notes
    return comparison
