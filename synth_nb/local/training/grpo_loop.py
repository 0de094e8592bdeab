"""GRPO inside the worker: rollouts through the task app, group-normalised advantages, KL to a reference.

Each step sends ``group_size`` rollouts for each of ``batch_size`` seeds to the task app's ``/rollout``.
Each rollout gets its own policy URL (a slot on the backend's policy route), so the completions sampled
for it can be paired with the reward in its RolloutResponse. The loss is
``-A * mean log p(completion) + beta * KL(policy || reference)`` (k3 estimator, per token).

Why this is not TRL's ``GRPOTrainer``: the task-app contract drives the policy itself. A rollout is one
``POST /rollout``; the task app renders its own prompt from the seed and calls the policy's inference URL (in a
multi-turn environment, once per turn), then answers with the reward of the whole episode. ``GRPOTrainer``
works the other way round: it generates completions for prompts taken from a dataset and asks reward functions
to score each (prompt, completion) pair, and the contract has neither a route that yields a seed's prompt
without running the episode nor one that scores a completion it did not ask for. TRL's experimental
``rollout_func`` hook (TRL >= 1.x: the trainer hands over prompts and takes back prompt/completion ids and
log-probs) could wrap single-turn task apps such as the bundled ``charclass`` one, with the prompt then fixed
by the dataset rather than by the task app; multi-turn environments would still need this loop.

The loop trains on the device SFT uses (``device.choose_device``: CUDA or MPS when present, else the CPU;
``SYNTH_NB_DEVICE`` forces one): the policy and its frozen reference, the sampler's generator and logit mask,
the log-prob batches and the optimiser state live there, and forward passes run under bf16 autocast where the
device supports it. Only numbers for events (token ids, losses) come back to the CPU. Its first event's
``device`` says which device it is.
"""

from __future__ import annotations

import copy
import statistics
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import torch

from synth_nb.local.errors import TaskAppError
from synth_nb.local.training.channel import Channel
from synth_nb.local.training.device import Device, choose_device
from synth_nb.local.training.model_choice import ModelChoice
from synth_nb.local.training.models import LoadedModel, apply_lora, load_model, save_model
from synth_nb.local.training.policy_service import PolicyService, Sample
from synth_nb.local.training.rollout_samples import MAX_EVAL_SAMPLES, emit_rollouts
from synth_nb.local.training.schedule import lr_factor
from synth_nb.local.training.step_signals import group_signals
from synth_nb.local.training.task_app_client import RolloutOutcome, rollout_outcome

__all__ = ["group_advantages", "grpo_loss", "run_grpo"]


def group_advantages(rewards: list[float]) -> list[float]:
    """(r - mean) / std within one group; all zeros when every reward is equal (no signal)."""
    if len(rewards) < 2:
        return [0.0] * len(rewards)
    mean, std = statistics.fmean(rewards), statistics.pstdev(rewards)
    return [0.0] * len(rewards) if std < 1e-6 else [(r - mean) / (std + 1e-4) for r in rewards]


def _token_logps(model: Any, samples: list[Sample], temperature: float, pad_id: int,
                 logit_mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token log-probs of each completion (padded [n, T]) and the completion mask, on the model's device."""
    device = next(model.parameters()).device
    seqs = [s.prompt_ids + s.completion_ids for s in samples]
    width = max(len(s) for s in seqs)
    ids = torch.tensor([seq + [pad_id] * (width - len(seq)) for seq in seqs], dtype=torch.long, device=device)
    attention = torch.tensor([[1] * len(seq) + [0] * (width - len(seq)) for seq in seqs], dtype=torch.long,
                             device=device)
    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1, :].float()
    if logit_mask is not None:  # the sampling restriction, so log-probs match what the policy sampled from
        logits = logits + logit_mask
    logps = torch.log_softmax(logits / max(temperature, 1e-3), dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    logps = torch.nan_to_num(logps, neginf=0.0)  # prompt positions may hold masked-out tokens; never counted
    mask = torch.zeros_like(logps)
    for row, sample in enumerate(samples):
        start = len(sample.prompt_ids) - 1
        mask[row, start: start + len(sample.completion_ids)] = 1.0
    return logps, mask


def grpo_loss(model: Any, reference: Any, samples: list[Sample], advantages: list[float], *, beta: float,
              temperature: float, pad_id: int, logit_mask: torch.Tensor | None = None
              ) -> tuple[torch.Tensor, dict[str, float]]:
    logps, mask = _token_logps(model, samples, temperature, pad_id, logit_mask)
    with torch.no_grad():
        ref_logps, _ = _token_logps(reference, samples, temperature, pad_id, logit_mask)
    lengths = mask.sum(-1).clamp(min=1.0)
    adv = torch.tensor(advantages, dtype=logps.dtype, device=logps.device)
    policy_term = -(adv * (logps * mask).sum(-1) / lengths)
    delta = (ref_logps - logps) * mask
    kl = ((torch.exp(delta) - delta - 1.0) * mask).sum(-1) / lengths
    loss = (policy_term + beta * kl).mean()
    return loss, {"pg_loss": float(policy_term.mean().detach()), "kl": float(kl.mean().detach())}


class _Rollouts:
    """Runs one phase of rollouts on threads while the main thread serves the policy."""

    def __init__(self, cfg: dict[str, Any], service: PolicyService, channel: Channel) -> None:
        self.cfg = cfg
        self.service = service
        self.channel = channel
        self.urls: list[str] = cfg["policy_urls"]
        self.pool = ThreadPoolExecutor(max_workers=max(1, int(cfg["max_concurrent"])), thread_name_prefix="rollout")
        self.http = httpx.Client(timeout=httpx.Timeout(float(cfg.get("rollout_timeout_s", 120)), connect=5.0))

    def _payload(self, slot: int, seed: int, mode: str, run_id: str, temperature: float) -> dict[str, Any]:
        cid = f"{run_id}-{slot}"
        policy_config = {**self.cfg.get("policy_config", {}), "model": self.cfg["model_label"],
                         "inference_url": f"{self.urls[slot]}?cid={cid}", "trace_correlation_id": cid,
                         "temperature": temperature, "top_p": 1.0, "max_tokens": self.cfg["max_new_tokens"]}
        return {"run_id": run_id, "mode": mode, "ops": self.cfg["ops"],
                "env": {"env_name": self.cfg.get("env_name"), "config": self.cfg.get("env_config", {}), "seed": seed},
                "policy": {"policy_name": self.cfg.get("policy_name"), "config": policy_config},
                "record": {"trajectories": True, "logprobs": False, "value": False, "return_trace": False},
                "on_done": "reset", "safety": {"max_ops": 100000, "max_time_s": 3600.0}}

    def run(self, seeds: list[int], mode: str, tag: str, temperature: float
            ) -> list[RolloutOutcome | Exception] | None:
        """Outcomes per seed (an Exception where a rollout failed); None when cancelled."""
        self.service.start_phase(temperature)
        futures: list[Future[RolloutOutcome]] = [
            self.pool.submit(rollout_outcome, self.http, self.cfg["task_url"],
                             self._payload(slot, seed, mode, f"{tag}-r{slot}", temperature), self.cfg["task_key"])
            for slot, seed in enumerate(seeds)]
        while not all(f.done() for f in futures):
            if self.channel.cancelled.is_set():
                for f in futures:
                    f.cancel()
                self.service.refuse_all("the job was cancelled")
                return None
            self.service.serve()
        self.service.serve(wait_s=0.0)
        return [f.exception() or f.result() for f in futures]  # type: ignore[misc]

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _check_phase(results: list[RolloutOutcome | Exception], what: str) -> list[str]:
    errors = [str(r) for r in results if isinstance(r, Exception)]
    if errors and len(errors) == len(results):
        raise TaskAppError(f"every {what} rollout failed; first error: {errors[0]}")
    return errors


@dataclass
class _GrpoRun:
    """What the steps of one GRPO run share: settings, the device, the policy and its frozen reference, the
    optimiser."""

    cfg: dict[str, Any]
    channel: Channel
    device: Device
    choice: ModelChoice
    loaded: LoadedModel
    reference: Any
    service: PolicyService
    params: list[Any]
    optim: Any
    notes: list[str]
    total: int
    batch: int
    group: int
    beta: float
    temperature: float
    eval_seeds: list[int]
    eval_every: int
    eval_temperature: float
    curve: list[list[float]] = field(default_factory=list)
    eval_curve: list[list[float]] = field(default_factory=list)


def _prepare(cfg: dict[str, Any], channel: Channel, device: Device) -> _GrpoRun:
    """Load the model, freeze a copy as the KL reference, apply LoRA when asked, put both on ``device``, build
    the optimiser there."""
    mc = cfg["model_choice"]
    choice = ModelChoice(mc["kind"], mc["requested"], Path(mc["path"]) if mc.get("path") else None, mc["reason"],
                         mc.get("source", "tiny"))
    seed = int(cfg.get("seed", 0))
    loaded = load_model(choice, sequence_length=int(cfg.get("sequence_length", 256)), seed=seed,
                        tiny_overrides=cfg.get("tiny") or {})
    reference = copy.deepcopy(loaded.model).eval()
    for p in reference.parameters():
        p.requires_grad_(False)
    notes = []
    if cfg.get("lora") and choice.kind == "local":
        apply_lora(loaded, **cfg["lora"])
    elif cfg.get("lora"):
        notes.append("trainer_mode lora on a random-init model: all weights are trained")
    loaded.model = loaded.model.to(device.torch_device)
    reference = reference.to(device.torch_device)
    loaded.model.train()
    service = PolicyService(loaded, channel, max_new_tokens=int(cfg["max_new_tokens"]), seed=seed, device=device)
    params = [p for p in loaded.model.parameters() if p.requires_grad]
    temperature = float(cfg["temperature"])
    return _GrpoRun(
        cfg=cfg, channel=channel, device=device, choice=choice, loaded=loaded, reference=reference, service=service,
        params=params, optim=torch.optim.AdamW(params, lr=float(cfg["learning_rate"]), weight_decay=0.0),
        notes=notes, total=int(cfg["total_steps"]), batch=int(cfg["batch_size"]), group=int(cfg["group_size"]),
        beta=float(cfg["kl_beta"]), temperature=temperature, eval_seeds=list(cfg["eval_seeds"]),
        eval_every=int(cfg["eval_every"]), eval_temperature=float(cfg.get("eval_temperature", temperature)))


def _announce(run: _GrpoRun) -> None:
    cfg, loaded, choice = run.cfg, run.loaded, run.choice
    run.channel.emit(
        "rl.train.started",
        f"GRPO on {loaded.description}, training on {run.device.description}: {choice.reason}. {run.total} "
        f"steps x {run.batch} seeds x {run.group} samples, lr={cfg['learning_rate']}, kl_beta={run.beta}"
        + (f". {'; '.join(run.notes)}" if run.notes else ""),
        {"model": loaded.description, "requested_model": choice.requested, "model_kind": choice.kind,
         "reason": choice.reason, "n_params": loaded.n_params, "trainable_params": loaded.n_trainable,
         "total_steps": run.total, "batch_size": run.batch, "group_size": run.group,
         "learning_rate": cfg["learning_rate"], "kl_beta": run.beta, "temperature": run.temperature,
         "task_url": cfg["task_url"], "threads": cfg.get("threads"), "notes": run.notes, **run.device.describe(),
         "model_source": choice.source, "trainer": "synth-nb GRPO loop",
         # the worker's CPU seconds so far: its start-up's work, which the machine's load does not change
         "start_cpu_seconds": round(time.process_time(), 2)})


def _evaluate(run: _GrpoRun, rollouts: _Rollouts, at: int) -> bool:
    """Score the evaluation seeds at step ``at``; False when cancelled meanwhile."""
    if not run.eval_seeds:
        return True
    channel, temperature = run.channel, run.eval_temperature
    how = "greedy" if temperature <= 0 else f"sampled at temperature {temperature:g}"
    channel.emit("rl.eval.started", f"evaluating {len(run.eval_seeds)} seeds ({how}) at step {at}",
                 {"step": at, "seeds": run.eval_seeds, "temperature": temperature})
    results = rollouts.run(run.eval_seeds, "eval", f"{run.cfg['job_id']}-eval{at}", temperature)
    if results is None:
        return False
    errors = _check_phase(results, "evaluation")
    scores = [r.reward for r in results if isinstance(r, RolloutOutcome)]
    emit_rollouts(channel, run.service.records, step=at, phase="eval", seeds=run.eval_seeds,
                  slots=range(min(len(results), MAX_EVAL_SAMPLES)), results=results)
    mean = statistics.fmean(scores)
    run.eval_curve.append([at, round(mean, 4)])
    channel.metric("eval.reward_mean", at, mean, {"n": len(scores)})
    channel.emit("rl.eval.summary", f"step {at} eval reward mean={mean:.3f} (N={len(scores)})",
                 {"step": at, "reward_mean": mean, "n": len(scores), "failed": len(errors)})
    return True


def _grouped_samples(run: _GrpoRun, results: list[RolloutOutcome | Exception], step: int, seeds: list[int]
                     ) -> tuple[list[Sample], list[float], list[float]]:
    """Pair each rollout's sampled completions with its group-normalised advantage; also the rewards. The
    first group is reported as ``rl.rollout.sampled`` events (``rollout_samples``)."""
    samples: list[Sample] = []
    advantages: list[float] = []
    rewards: list[float] = []
    records = run.service.records
    for g in range(run.batch):
        members = range(g * run.group, (g + 1) * run.group)
        ok = [k for k in members if isinstance(results[k], RolloutOutcome) and records.get(k)]
        group_rewards = [r.reward for k in ok if isinstance(r := results[k], RolloutOutcome)]
        rewards += group_rewards
        group_adv = dict(zip(ok, group_advantages(group_rewards), strict=True))
        if g == 0:
            emit_rollouts(run.channel, records, step=step, phase="train", seeds=seeds, slots=members,
                          results=results, advantages=group_adv)
        for k, adv in group_adv.items():
            for sample in records[k]:
                samples.append(sample)
                advantages.append(adv)
    if not samples:
        raise TaskAppError("the task app never called the policy's inference_url, so there is nothing "
                           "to train on; it must call policy.config.inference_url")
    return samples, advantages, rewards


def _update(run: _GrpoRun, step: int, samples: list[Sample], advantages: list[float]
            ) -> tuple[float, dict[str, float]]:
    """One optimiser step on the GRPO loss (forward passes under the device's autocast); returns the loss and
    its parts."""
    with run.device.autocast():
        loss, parts = grpo_loss(run.loaded.model, run.reference, samples, advantages, beta=run.beta,
                                temperature=run.temperature, pad_id=run.loaded.tokenizer.pad_id,
                                logit_mask=run.service.logit_mask)
    run.optim.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(run.params, 1.0)
    for param_group in run.optim.param_groups:
        param_group["lr"] = float(run.cfg["learning_rate"]) * lr_factor(step, run.total, 0)
    run.optim.step()
    return float(loss.detach()), parts


def _train_step(run: _GrpoRun, rollouts: _Rollouts, step: int, seeds: list[int]) -> bool:
    """Rollouts for ``seeds`` (``group`` each), one update, its metrics; False when cancelled."""
    t0 = time.perf_counter()
    slot_seeds = [s for s in seeds for _ in range(run.group)]
    results = rollouts.run(slot_seeds, "rl", f"{run.cfg['job_id']}-s{step + 1}", run.temperature)
    if results is None:
        return False
    errors = _check_phase(results, "training")
    samples, advantages, rewards = _grouped_samples(run, results, step + 1, slot_seeds)
    t1 = time.perf_counter()
    loss, parts = _update(run, step, samples, advantages)
    step += 1
    mean_reward = statistics.fmean(rewards) if rewards else 0.0
    run.curve.append([step, round(mean_reward, 4)])
    channel = run.channel
    channel.metric("train.reward_mean", step, mean_reward, {"n": len(rewards)})
    channel.metric("train.loss", step, loss)
    channel.metric("train.kl", step, parts["kl"])
    channel.emit("rl.train.step", f"step {step}/{run.total} reward_mean={mean_reward:.3f} loss={loss:.4f} "
                 f"kl={parts['kl']:.4f}",
                 {"step": step, "total_steps": run.total, "reward_mean": mean_reward, "loss": loss,
                  "kl": parts["kl"], "rollouts": len(results), "failed_rollouts": len(errors),
                  "seconds": round(time.perf_counter() - t0, 2), "rollout_seconds": round(t1 - t0, 2),
                  "generation_seconds": round(run.service.take_generation_seconds(), 2),
                  "peak_rss_mb": channel.report_memory(),
                  **group_signals([r.reward if isinstance(r, RolloutOutcome) else r for r in results],
                                  run.service.records, run.group, seeds)},
                 level="warning" if errors else "info")
    return True


def _train(run: _GrpoRun, rollouts: _Rollouts) -> tuple[str, int]:
    """Evaluate, train ``total`` steps with periodic evaluations, evaluate again; returns (status, step)."""
    step, next_seed = 0, int(run.cfg.get("seed_start", 0))
    if not _evaluate(run, rollouts, 0):
        return "cancelled", step
    while step < run.total:
        seeds = [next_seed + i for i in range(run.batch)]
        next_seed += run.batch
        if not _train_step(run, rollouts, step, seeds):
            return "cancelled", step
        step += 1
        periodic = run.eval_seeds and run.eval_every and step % run.eval_every == 0 and step < run.total
        if periodic and not _evaluate(run, rollouts, step):
            return "cancelled", step
    evaluated_last = run.eval_curve and run.eval_curve[-1][0] == step
    if run.eval_seeds and not evaluated_last and not _evaluate(run, rollouts, step):
        return "cancelled", step
    return "succeeded", step


def _finish(run: _GrpoRun, status: str, step: int, seconds: float) -> str:
    """Save the model (or the checkpoint of a cancelled run) and report the outcome."""
    cfg, channel = run.cfg, run.channel
    work_dir = Path(cfg["work_dir"]).resolve()
    folder = work_dir / ("model" if status == "succeeded" else "checkpoint")
    files = save_model(run.loaded, folder, {"base": run.choice.requested, "job_id": cfg["job_id"], "step": step,
                                            "description": run.loaded.description})
    summary = {**_summary(run.curve, run.eval_curve, step, run.total, seconds, channel.report_memory()),
               "tokens": run.service.tokens_served}
    file_list = [{"path": str(p.relative_to(work_dir)), "bytes": p.stat().st_size} for p in files]
    if status == "cancelled":
        channel.result(checkpoint=str(folder), checkpoint_step=step, files=file_list, rl=summary)
        channel.emit("rl.train.cancelled", f"Cancelled at step {step}/{run.total}; checkpoint kept in {folder}",
                     {"step": step, "checkpoint": str(folder)}, level="warning")
        return status
    channel.result(fine_tuned_model=cfg["fine_tuned_model"], model_path=str(folder), files=file_list, rl=summary,
                   best_score=summary.get("eval_reward_best"))
    channel.emit("rl.train.completed",
                 f"Finished {step} steps: train reward {summary['reward_start']} -> {summary['reward_end']}, eval "
                 f"{summary.get('eval_reward_start')} -> {summary.get('eval_reward_end')}; saved {cfg['fine_tuned_model']}",
                 {**summary, "fine_tuned_model": cfg["fine_tuned_model"]})
    return status


def run_grpo(cfg: dict[str, Any], channel: Channel) -> str:
    """Train with GRPO; returns "succeeded" or "cancelled" (a checkpoint is saved either way). A
    ``SYNTH_NB_DEVICE`` this machine does not have fails it (ValueError naming it) before the model loads."""
    run = _prepare(cfg, channel, choose_device())
    _announce(run)
    rollouts = _Rollouts(cfg, run.service, channel)
    started = time.perf_counter()
    try:
        status, step = _train(run, rollouts)
    finally:
        rollouts.close()
    return _finish(run, status, step, time.perf_counter() - started)


def _summary(curve: list[list[float]], eval_curve: list[list[float]], step: int, total: int, seconds: float,
             peak_rss_mb: float) -> dict[str, Any]:
    window = max(1, min(5, len(curve) // 4 or 1))
    start = statistics.fmean(r for _, r in curve[:window]) if curve else None
    end = statistics.fmean(r for _, r in curve[-window:]) if curve else None
    out: dict[str, Any] = {"steps": step, "total_steps": total, "reward_curve": curve, "eval_curve": eval_curve,
                           "reward_start": None if start is None else round(start, 4),
                           "reward_end": None if end is None else round(end, 4),
                           "seconds": round(seconds, 1), "peak_rss_mb": round(peak_rss_mb, 1)}
    if eval_curve:
        out.update(eval_reward_start=eval_curve[0][1], eval_reward_end=eval_curve[-1][1],
                   eval_reward_best=max(r for _, r in eval_curve))
    return out
