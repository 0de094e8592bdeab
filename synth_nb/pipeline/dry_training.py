"""A dry training run's figures as the backend answers them: a few of a job's real training steps, timed.

Part of ``POST {backend}/dry-rollout``'s answer for a job that trains weights (SFT, RL; see
``pipeline.dry_rollout``): the shortened run's span, its start-up (wall seconds, and the worker's CPU
seconds for it), a steady step's and one evaluation's seconds, the real job's steps and evaluations, and
the machine's load as the run ended. ``DryTraining.job_seconds`` is the job's wall time at that pace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DryTraining", "at_least_0", "number"]


def number(value: Any) -> float | None:
    """A JSON number as a float (None for anything else, a boolean included)."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def at_least_0(value: Any) -> float | None:
    """A JSON number that is not negative (None for anything else)."""
    found = number(value)
    return found if found is not None and found >= 0 else None


@dataclass(frozen=True)
class DryTraining:
    """A few of the job's real training steps, run and timed by the backend on its machine now (no job)."""

    model: str
    #: the shortened run's span (executor start to end), its start-up (worker started, model loaded, data
    #: prepared), and the steps it ran
    seconds: float
    load_seconds: float
    steps: int
    #: a steady step's and one periodic evaluation's seconds
    step_seconds: float
    evaluation_seconds: float
    #: the real job's steps and its evaluations every N steps (its first and last are in ``seconds`` already)
    job_steps: int
    job_evaluations: int
    step_what: str = "one optimiser step"
    evaluation_what: str = "one evaluation"
    device: str | None = None
    #: the worker's CPU seconds for its start-up, and the machine's 1-minute load average and cores the
    #: backend may use as the dry run ended (None: the backend did not say)
    load_cpu_seconds: float | None = None
    load_average: float | None = None
    cores: int | None = None

    @property
    def contention(self) -> float | None:
        """How many times longer a CPU second takes on this machine now: the load average per core, at
        least 1 (None when the backend did not say its load)."""
        if self.load_average is None or not self.cores:
            return None
        return max(1.0, self.load_average / self.cores)

    @property
    def startup_seconds(self) -> float:
        """The job's start-up: the dry run's, or when that took longer than its CPU work at the machine's
        load, that (its worker waited for the disk, a cold start the job's worker, started after it, does
        not repeat, or for a burst of the machine's other work, which a 1-minute load average smooths)."""
        if self.load_cpu_seconds is None or self.contention is None:
            return self.load_seconds
        return min(self.load_seconds, self.load_cpu_seconds * self.contention)

    @property
    def job_seconds(self) -> float:
        """The job's wall time at this pace: the dry run's span (start-up, first and last evaluation, saving,
        its steps), its start-up as ``startup_seconds`` counts it, plus the job's other steps and its
        periodic evaluations."""
        span = self.seconds - self.load_seconds + self.startup_seconds
        return max(span, span + (self.job_steps - self.steps) * self.step_seconds
                   + self.job_evaluations * self.evaluation_seconds)

    def line(self) -> str:
        where = f" on {self.device}" if self.device else ""
        return (f"dry training: {self.steps} real steps of the job{where} ({self.model}): start-up "
                f"{self.load_seconds:.1f} s (worker, model loaded, data prepared), {self.step_seconds:.2f} s per "
                f"step ({self.step_what}), {self.evaluation_seconds:.2f} s per evaluation "
                f"({self.evaluation_what}); {self.seconds:.1f} s in all")

    @classmethod
    def parse(cls, doc: Any) -> DryTraining | None:
        """The backend's ``training`` answer, or None when it is missing or not of that shape."""
        if not isinstance(doc, dict):
            return None
        names = ("seconds", "load_seconds", "steps", "step_seconds", "evaluation_seconds", "job_steps",
                 "job_evaluations")
        numbers = {name: number(doc.get(name)) for name in names}
        if any(v is None or v < 0 for v in numbers.values()) or not numbers["steps"]:
            return None
        text = {k: str(doc[k]) for k in ("step_what", "evaluation_what") if isinstance(doc.get(k), str)}
        return cls(model=str(doc.get("model") or "the job's model"), seconds=numbers["seconds"] or 0.0,
                   load_seconds=numbers["load_seconds"] or 0.0, steps=int(numbers["steps"] or 0),
                   step_seconds=numbers["step_seconds"] or 0.0, evaluation_seconds=numbers["evaluation_seconds"] or 0.0,
                   job_steps=int(numbers["job_steps"] or 0), job_evaluations=int(numbers["job_evaluations"] or 0),
                   device=str(doc["device"]) if isinstance(doc.get("device"), str) else None,
                   load_cpu_seconds=at_least_0(doc.get("load_cpu_seconds")),
                   load_average=at_least_0(doc.get("load_average")),
                   cores=int(cores) if (cores := at_least_0(doc.get("cores"))) else None, **text)
