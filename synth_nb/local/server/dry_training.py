"""Part of ``POST /dry-rollout`` for a job that trains weights (SFT, RL): a few of its real training steps,
timed, so the pre-flight card's wall time is an estimate rather than a floor.

The job's own executor runs, shortened, with a context of its own that stores nothing. It starts the
training worker the job would start (same interpreter, environment and device, so the backend process
itself never imports torch for it); the worker loads the job's model as the job would (the resolved model,
or the tiny stand-in) and trains ``STEPS`` real steps on the job's own data: SFT batches of its dataset at
its batch size and sequence length; RL rollouts of its groups through the task app and one GRPO update per
step. Events are kept in memory with the time each arrived, the model is written to a temporary folder
that is removed afterwards, and no job exists at any point.

The answer (``training``): the shortened run's span (``seconds``: the executor's start to its end, the span
a job's ``started_at`` to ``finished_at`` covers), its start-up (``load_seconds``: worker started, model
loaded, data prepared; ``load_cpu_seconds``: the worker's CPU seconds for it), the steps it ran and a
steady step's seconds, one evaluation's seconds, the real job's steps and periodic evaluations, and the
machine's 1-minute ``load_average`` and the ``cores`` this process may use as the run ended. The shortened run has the job's fixed parts once, as the job
has them (start-up, the first and the last evaluation, saving); the client adds the job's other steps
and evaluations at the measured pace.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
import shutil
import statistics
import tempfile
import threading
from pathlib import Path
from typing import Any

from synth_nb.local.errors import ApiError, ExecutorInputError, TrainingFailed, UnknownLocalModel
from synth_nb.local.runner import JobRunner
from synth_nb.local.server.dry_context import DryContext
from synth_nb.local.training.model_choice import choose_model

__all__ = ["STEPS", "dry_files", "dry_training"]

#: training steps the dry run takes: the first warms up, the others give the steady pace (their median: one
#: step is a fraction of a second, and one the machine's other work slowed, or the last of a fresh worker's
#: warm-up, can be twice as long as the others)
STEPS = {"sft": 4, "rl": 4}
#: the dry run is cancelled past this (the client waits up to 600 s for the whole dry run)
LIMIT_S = 420.0
#: bytes of one dataset sent inline with the request (the request's own limit bounds them too)
MAX_FILE_BYTES = 4 * 1024 * 1024
#: the SFT worker's sample event (``synth_nb.local.training.sft_samples.SAMPLE_EVENT``, which imports torch)
_SFT_SAMPLE = "sft.sample.generated"


def dry_files(value: Any) -> dict[str, str]:
    """The request's ``files``: dataset text by the id the body names it with (SFT), each bounded."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ApiError(422, "files must map the body's file ids to the files' text")
    if any(len(v.encode()) > MAX_FILE_BYTES for v in value.values()):
        raise ApiError(413, f"a dry-run file is larger than {MAX_FILE_BYTES} bytes; send its first lines")
    return dict(value)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _periodic(total: int, every: int) -> int:
    """Evaluations a job runs every ``every`` steps before its last one (the last step's is a fixed part)."""
    return len(range(every, total, every)) if every > 0 else 0


def _start_cpu(started: dict[str, Any]) -> dict[str, Any]:
    """The worker's CPU seconds up to its start event (``load_cpu_seconds``), when it says them."""
    cpu = _number(started.get("start_cpu_seconds"))
    return {} if cpu is None else {"load_cpu_seconds": cpu}


def _machine() -> dict[str, Any]:
    """The machine's 1-minute load average and the cores this process may use, as the dry run ends."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return {"cores": cores}
    return {"load_average": round(load, 2), "cores": cores}


def _shortened(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """The body with the job cut to ``STEPS`` steps and no periodic evaluation."""
    short = copy.deepcopy(body)
    def table(node: dict[str, Any], key: str) -> dict[str, Any]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        found: dict[str, Any] = node[key]
        return found

    if kind == "sft":
        table(short, "hyperparameters").update(max_steps=STEPS["sft"], eval_steps=0)
    else:
        config = table(table(short, "data"), "config")
        table(config, "training")["max_steps"] = STEPS["rl"]
        table(config, "evaluation")["every_n_iters"] = 0
    return short


def _sft_figures(ctx: DryContext, body: dict[str, Any]) -> dict[str, Any]:
    from synth_nb.local.executors.sft import sft_settings

    started = ctx.first("sft.training.started")
    steps = [t for t, name, _ in ctx.metrics if name == "train.loss"]
    if started is None or len(steps) < 2:
        raise TrainingFailed("the dry training run reported fewer than two steps")
    settings = sft_settings(body, choose_model(body.get("model") if isinstance(body.get("model"), str) else None))
    n_examples = int(started[1].get("n_examples") or 0)
    per_step = max(1, settings["batch_size"]) * max(1, settings["grad_accum"])
    job_steps = settings["max_steps"] or math.ceil(n_examples / per_step) * settings["n_epochs"]
    validated = bool(started[1].get("n_validation"))
    samples = [t for t in ctx.times(_SFT_SAMPLE) if t > steps[-1]]
    validation = next((t for t, name, _ in ctx.metrics if name == "val.loss" and t > steps[-1]), None)
    evaluation = (max(samples, default=validation or steps[-1]) - steps[-1]) if validated else 0.0
    # the median time between the steps' losses as they arrived: the steps after the first (which also warms
    # up), each with what the job does between two steps, one the machine's other work slowed left out
    step_seconds = statistics.median(later - earlier for earlier, later in itertools.pairwise(steps))
    return {"model": started[1].get("model"), "load_seconds": started[0], **_start_cpu(started[1]),
            "steps": len(steps), "step_seconds": step_seconds, "evaluation_seconds": evaluation,
            "job_steps": job_steps, "job_evaluations": _periodic(job_steps, settings["eval_steps"]) if validated else 0,
            "step_what": f"one optimiser step; the median of the {len(steps) - 1} after the first",
            "evaluation_what": f"validation loss on {started[1].get('n_validation')} examples and sample replies"}


def _rl_figures(ctx: DryContext, body: dict[str, Any]) -> dict[str, Any]:
    from synth_nb.local.executors.rl import _model_name, rl_settings

    started = ctx.first("rl.train.started")
    steps = ctx.times("rl.train.step")
    if started is None or not steps:
        raise TrainingFailed("the dry training run reported no step")
    step_data = [d for _, kind, d in ctx.events if kind == "rl.train.step"]
    # the worker's own count of a steady step (the first also warms up), the median of them; the events'
    # arrival times also hold the backend's waits
    timed = [_number(d.get("seconds")) for d in step_data[1:] or step_data]
    step_seconds = (statistics.median(t for t in timed if t is not None) if all(timed) else
                    steps[-1] - steps[-2] if len(steps) > 1 else 0.0)
    last_eval = [t for t in ctx.times("rl.eval.started") if t > steps[-1]]
    summary = ctx.first("rl.eval.summary", after=last_eval[0]) if last_eval else None
    evaluation = summary[0] - last_eval[0] if last_eval and summary is not None else 0.0
    settings = rl_settings(body, choose_model(_model_name(body)))
    every = settings["eval_every"] if settings["eval_seeds"] else 0
    return {"model": started[1].get("model"), "load_seconds": started[0], **_start_cpu(started[1]),
            "steps": len(steps), "step_seconds": step_seconds, "evaluation_seconds": evaluation,
            "job_steps": settings["total_steps"],
            "job_evaluations": _periodic(settings["total_steps"], every),
            "step_what": (f"{step_data[-1].get('rollouts')} rollouts and one GRPO update; the median of "
                          f"the {len(timed)} steps after the first"),
            "evaluation_what": f"{len(settings['eval_seeds'])} evaluation rollouts"}


def dry_training(runner: JobRunner, kind: str, body: dict[str, Any], files: dict[str, str],
                 key: str | None) -> dict[str, Any]:
    """Run the job's executor for ``STEPS[kind]`` steps and time it; ``{"error": why}`` when it failed."""
    from synth_nb.local.executors.rl import RlExecutor
    from synth_nb.local.executors.sft import SftExecutor

    executor = SftExecutor() if kind == "sft" else RlExecutor()
    try:
        executor.validate(kind, body)
    except (ExecutorInputError, UnknownLocalModel) as exc:
        raise ApiError(400, str(exc)) from None
    folder = Path(tempfile.mkdtemp(prefix="synth-nb-dry-"))
    try:
        paths = {}
        for number, (file_id, text) in enumerate(files.items()):
            paths[file_id] = folder / f"file-{number}.jsonl"
            paths[file_id].write_text(text, encoding="utf-8")
        (folder / "work").mkdir()
        ctx = DryContext(runner, kind, _shortened(kind, body), folder / "work", paths, key)
        limit = threading.Timer(LIMIT_S, ctx.cancelled.set)
        limit.start()
        try:
            executor.run(ctx)
        except (TrainingFailed, ExecutorInputError) as exc:
            return {"error": str(exc)}
        finally:
            limit.cancel()
            runner.policies.remove_job(ctx.job_id)
        seconds = ctx._now()
        if ctx.cancelled.is_set():
            return {"error": f"the dry training run took longer than {LIMIT_S:.0f} s and was stopped"}
        figures = _sft_figures(ctx, body) if kind == "sft" else _rl_figures(ctx, body)
        return {**figures, **_machine(), "seconds": round(seconds, 3), "device": _device(ctx, kind)}
    except TrainingFailed as exc:
        return {"error": str(exc)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _device(ctx: DryContext, kind: str) -> str | None:
    started = ctx.first(f"{kind}.training.started" if kind == "sft" else "rl.train.started")
    return None if started is None else started[1].get("device")

