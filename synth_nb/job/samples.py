"""The samples behind a job's numbers, as ``Job`` offers them: ``job.rollouts()`` (RL), ``job.samples()`` (SFT).

A flow streams at most one kind (``Flow.sample_spec``). Its sample events are indexed as they arrive
(``index_samples``: step, seed, phase and score in columns), so a view selects with the index and builds
rows only for what it shows (``synth_nb.flows.samples.SampleTable``). The result is a
``SampleTable``: a notebook shows it as a table (best and worst of the latest step at the top, each row
opening its full text), ``*_df()`` is the same selection as a DataFrame.
"""

from __future__ import annotations

from typing import Any

from synth_nb.errors import ConfigError
from synth_nb.flows import all_flows, get_flow
from synth_nb.flows.sample_rows import SampleFilter, SampleSpec
from synth_nb.flows.samples import SampleTable
from synth_nb.job.logs import EventLog

__all__ = ["SampleViews", "index_samples", "sample_spec", "sample_table"]


def sample_spec(flow_name: str) -> SampleSpec | None:
    """The samples a flow streams (None: none, or a flow not registered here)."""
    try:
        return get_flow(flow_name).sample_spec
    except ConfigError:
        return None


def index_samples(events: EventLog, flow_name: str) -> None:
    """Index the sample events of the flow's kind as they arrive (``EventLog.index_samples``)."""
    spec = sample_spec(flow_name)
    if spec is not None:
        events.index_samples(spec.event_types, spec.score_key)


def sample_table(job: Any, kind: str, selection: SampleFilter | None = None) -> SampleTable:
    """``job``'s samples of ``kind`` ("rollouts", "samples"), selected; ConfigError naming where ``kind``
    is found when the job's flow streams another kind or none."""
    flow = get_flow(job.flow)
    spec = flow.sample_spec
    if spec is None or spec.kind != kind:
        if spec is not None:
            raise ConfigError(f"job {job.id} ({flow.label}) has no {kind}; its samples: job.{spec.kind}()")
        having = "; ".join(f"{f.label} jobs: job.{f.sample_spec.kind}()" for f in all_flows() if f.sample_spec)
        raise ConfigError(f"job {job.id} ({flow.label}) streams no samples ({having})")
    events: EventLog = job.events
    index = events.samples if events.samples is not None and events.samples.types == spec.event_types \
        else events.index_samples(spec.event_types, spec.score_key)
    return SampleTable.select(spec, job.id, index.columns(), list(index.phases), events.data_at, selection)


class SampleViews:
    """``Job``'s sample views (a mixin: ``Job`` has the ``flow``, ``id`` and ``events`` they read)."""

    def rollouts(self, step: int | None = None, *, seed: int | None = None, phase: str | None = None,
                 min_reward: float | None = None, max_reward: float | None = None, worst: int | None = None,
                 best: int | None = None) -> SampleTable:
        """An RL job's sampled rollouts so far (the first group of each step and every evaluation round):
        prompt, completion, reward (and its parts), advantage, tokens, seed. Filters: ``step``, ``seed``,
        ``phase`` ("train"/"eval"), a reward range; then the ``worst`` / ``best`` K by reward."""
        return sample_table(self, "rollouts", SampleFilter(step, seed, phase, min_reward, max_reward, worst, best))

    def rollouts_df(self, step: int | None = None, **filters: Any) -> Any:
        """``rollouts(...)`` as a pandas DataFrame: one row per sampled rollout, one column per field."""
        return self.rollouts(step, **filters).frame()

    def samples(self, step: int | None = None, *, worst: int | None = None, best: int | None = None) -> SampleTable:
        """An SFT job's sample completions: at each evaluation, the model's greedy reply to a fixed handful of
        validation prompts beside the reference answer, step by step. ``worst`` / ``best`` K rank them by
        their similarity to the reference."""
        return sample_table(self, "samples", SampleFilter(step=step, worst=worst, best=best))

    def samples_df(self, step: int | None = None, **filters: Any) -> Any:
        """``samples(...)`` as a pandas DataFrame."""
        return self.samples(step, **filters).frame()
