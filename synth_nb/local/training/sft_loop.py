"""Supervised fine-tuning inside the worker: chat JSONL in, ``train.loss`` / ``val.loss`` and a model out.

A model found on disk with a Hugging Face tokenizer trains with TRL's ``SFTTrainer`` (``sft_trl``). This own
loop remains for the tiny random-init stand-in (its byte tokenizer is no Hugging Face tokenizer TRL could use)
and for an install without TRL; it runs on the same device (``device``), with bf16 autocast where TRL would use
bf16.
"""

from __future__ import annotations

import importlib.util
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from synth_nb.local.training.channel import Channel
from synth_nb.local.training.chat_data import load_chat_jsonl
from synth_nb.local.training.device import Device, choose_device
from synth_nb.local.training.model_choice import ModelChoice
from synth_nb.local.training.models import LoadedModel, apply_lora, load_model, save_model
from synth_nb.local.training.schedule import lr_factor
from synth_nb.local.training.sft_samples import SAMPLE_PROMPTS, SampleProbe
from synth_nb.local.training.tokenizer import IGNORE_INDEX, HfChatTokenizer, encode_chat

__all__ = ["encode_examples", "make_batch", "run_sft"]

Example = tuple[list[int], list[int]]


def encode_examples(loaded: LoadedModel, conversations: list[list[dict[str, Any]]],
                    max_len: int) -> tuple[list[Example], int]:
    """Token ids + labels truncated to ``max_len``; returns (examples, dropped) where dropped lost every label."""
    out: list[Example] = []
    dropped = 0
    for messages in conversations:
        ids, labels = encode_chat(loaded.tokenizer, messages)
        ids, labels = ids[:max_len], labels[:max_len]
        if all(label == IGNORE_INDEX for label in labels[1:]):
            dropped += 1
        else:
            out.append((ids, labels))
    return out, dropped


def make_batch(examples: list[Example], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(ids) for ids, _ in examples)
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    labels = torch.full((len(examples), width), IGNORE_INDEX, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for row, (ids, labs) in enumerate(examples):
        input_ids[row, : len(ids)] = torch.tensor(ids)
        labels[row, : len(labs)] = torch.tensor(labs)
        mask[row, : len(ids)] = 1
    return {"input_ids": input_ids, "labels": labels, "attention_mask": mask}


def _on(batch: dict[str, torch.Tensor], model: Any) -> dict[str, torch.Tensor]:
    device = next(model.parameters()).device
    return batch if device.type == "cpu" else {k: v.to(device) for k, v in batch.items()}


@torch.no_grad()
def _evaluate(model: Any, examples: list[Example], batch_size: int, pad_id: int, device: Device) -> float:
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(examples), batch_size):
        batch = _on(make_batch(examples[start: start + batch_size], pad_id), model)
        n = int((batch["labels"][:, 1:] != IGNORE_INDEX).sum())
        with device.autocast():
            loss = model(**batch).loss
        total += float(loss) * n
        count += n
    model.train()
    return total / max(1, count)


def _batches(n: int, batch_size: int, rng: random.Random) -> list[list[int]]:
    """Plain shuffled batches. Grouping by length cut padding by a third but left the loss 5x higher after
    300 steps on a small mixed dataset (batches of one kind of example), so it is not done."""
    order = list(range(n))
    rng.shuffle(order)
    return [order[i: i + batch_size] for i in range(0, n, batch_size)]


@dataclass
class _SftRun:
    """What the steps of one SFT run share: the settings, the model, the encoded data and the optimiser."""

    cfg: dict[str, Any]
    channel: Channel
    choice: ModelChoice
    loaded: LoadedModel
    train: list[Example]
    val: list[Example]
    dropped: int
    notes: list[str]
    seq_len: int
    batch_size: int
    accum: int
    total_steps: int
    warmup: int
    params: list[Any]
    optim: Any
    rng: random.Random
    device: Device
    #: the fixed prompts answered at each evaluation (``sft_samples``)
    sampler: SampleProbe

    @property
    def pad_id(self) -> int:
        return self.loaded.tokenizer.pad_id


@dataclass
class _Progress:
    """How far training got: the step reached, the losses seen, tokens and time spent."""

    status: str = "succeeded"
    step: int = 0
    epoch: int = 0
    tokens: int = 0
    padded: int = 0
    train_time: float = 0.0
    first_loss: float | None = None
    last_loss: float = float("nan")


def _model_choice(cfg: dict[str, Any]) -> ModelChoice:
    raw = cfg["model_choice"]
    return ModelChoice(**{**raw, "path": raw.get("path") and Path(raw["path"])})


def _prepare(cfg: dict[str, Any], channel: Channel, choice: ModelChoice, loaded: LoadedModel, device: Device,
             notes: list[str]) -> _SftRun:
    """LoRA when asked, the data encoded, the model on its device and the optimiser."""
    seed = int(cfg.get("seed", 0))
    seq_len = min(int(cfg["sequence_length"]), loaded.max_positions)
    lora = cfg.get("lora")
    if lora and choice.kind == "local":
        apply_lora(loaded, r=int(lora["r"]), alpha=int(lora["alpha"]), dropout=float(lora["dropout"]),
                   target_modules=lora.get("target_modules"))
    elif lora:
        notes.append("LoRA was requested but adapters over random weights learn little: all weights are trained")
    conversations = load_chat_jsonl(Path(cfg["train_path"])).examples
    train, dropped = encode_examples(loaded, conversations, seq_len)
    if not train:
        raise ValueError(f"every training example lost its assistant tokens when cut to {seq_len} tokens; "
                         "raise hyperparameters.sequence_length")
    val: list[Example] = []
    sampler = SampleProbe(loaded, conversations[:4 * SAMPLE_PROMPTS], "train", seq_len)
    if cfg.get("val_path"):
        held = load_chat_jsonl(Path(cfg["val_path"]), label="validation file").examples
        val, _ = encode_examples(loaded, held, seq_len)
        sampler = SampleProbe(loaded, held[:4 * SAMPLE_PROMPTS], "validation", seq_len) if held else sampler
    batch_size = max(1, int(cfg["batch_size"]))
    accum = max(1, int(cfg.get("grad_accum", 1)))
    total_steps = math.ceil(len(train) / (batch_size * accum)) * int(cfg["n_epochs"])
    if cfg.get("max_steps"):  # as in Hugging Face's Trainer, max_steps overrides the epoch count
        total_steps = int(cfg["max_steps"])
    model = loaded.model.to(device.name)
    loaded.model = model
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=float(cfg["learning_rate"]), weight_decay=float(cfg.get("weight_decay", 0.0)))
    return _SftRun(cfg=cfg, channel=channel, choice=choice, loaded=loaded, train=train, val=val, dropped=dropped,
                   notes=notes, seq_len=seq_len, batch_size=batch_size, accum=accum, total_steps=total_steps,
                   warmup=int(total_steps * float(cfg.get("warmup_ratio", 0.0))), params=params, optim=optim,
                   rng=random.Random(seed), device=device, sampler=sampler)


def _announce(run: _SftRun) -> None:
    loaded, choice, cfg = run.loaded, run.choice, run.cfg
    run.channel.emit("sft.training.started",
                     f"Training {loaded.description}: {choice.reason}. {len(run.train)} examples, "
                     f"{run.total_steps} steps" + (f". {'; '.join(run.notes)}" if run.notes else ""),
                     {"model": loaded.description, "requested_model": choice.requested, "model_kind": choice.kind,
                      "reason": choice.reason, "n_params": loaded.n_params, "trainable_params": loaded.n_trainable,
                      "n_examples": len(run.train), "n_validation": len(run.val), "dropped_examples": run.dropped,
                      "total_steps": run.total_steps, "batch_size": run.batch_size,
                      "learning_rate": cfg["learning_rate"], "sequence_length": run.seq_len,
                      "threads": cfg.get("threads"), "notes": run.notes, "model_source": choice.source,
                      "trainer": "synth-nb loop", **run.device.describe(),
                      # the worker's CPU seconds so far: its start-up's work, which the machine's load does not change
                      "start_cpu_seconds": round(time.process_time(), 2)})


def _optimizer_step(run: _SftRun, groups: list[list[int]], progress: _Progress) -> float:
    """One optimiser step over ``groups`` (gradient accumulation); returns the last group's loss."""
    started = time.perf_counter()
    loss_value = float("nan")
    for group in groups:
        batch = _on(make_batch([run.train[i] for i in group], run.pad_id), run.loaded.model)
        with run.device.autocast():  # bf16 where the device supports it (the forward pass only)
            loss = run.loaded.model(**batch).loss / len(groups)
        loss.backward()
        progress.tokens += int(batch["attention_mask"].sum())
        progress.padded += batch["input_ids"].numel()
        loss_value = float(loss) * len(groups)
    torch.nn.utils.clip_grad_norm_(run.params, 1.0)
    for param_group in run.optim.param_groups:
        param_group["lr"] = float(run.cfg["learning_rate"]) * lr_factor(progress.step, run.total_steps, run.warmup)
    run.optim.step()
    run.optim.zero_grad(set_to_none=True)
    progress.train_time += time.perf_counter() - started
    return loss_value


def _report_step(run: _SftRun, progress: _Progress, log_every: int) -> None:
    step, total, loss = progress.step, run.total_steps, progress.last_loss
    run.channel.metric("train.loss", step, loss, {"epoch": progress.epoch + 1})
    if step % log_every == 0 or step == total:
        seconds = max(progress.train_time, 1e-9)
        tps = progress.tokens / seconds
        run.channel.emit("sft.progress", f"step {step}/{total} loss={loss:.4f} tokens/s={tps:,.0f}",
                         {"step": step, "total_steps": total, "epoch": progress.epoch + 1, "loss": loss,
                          "tokens_per_second": round(tps, 1),
                          "padded_tokens_per_second": round(progress.padded / seconds, 1),
                          "peak_rss_mb": run.channel.report_memory()})
    eval_steps = int(run.cfg.get("eval_steps") or 0)
    if run.val and eval_steps and step % eval_steps == 0 and step < total:
        _report_validation(run, step)
        run.sampler.emit(run.channel, step)


def _train(run: _SftRun) -> _Progress:
    """Epochs of shuffled batches until ``total_steps`` or a cancel."""
    progress = _Progress()
    log_every = max(1, min(25, run.total_steps // 50))
    while progress.step < run.total_steps and progress.status == "succeeded":
        groups = _batches(len(run.train), run.batch_size, run.rng)
        for g in range(0, len(groups), run.accum):
            if run.channel.cancelled.is_set():
                progress.status = "cancelled"
                break
            progress.last_loss = _optimizer_step(run, groups[g: g + run.accum], progress)
            progress.step += 1
            progress.first_loss = progress.last_loss if progress.first_loss is None else progress.first_loss
            _report_step(run, progress, log_every)
            if progress.step >= run.total_steps:
                break
        progress.epoch += 1
    if run.val and progress.status == "succeeded":
        _report_validation(run, progress.step)
    if progress.status == "succeeded":
        run.sampler.emit(run.channel, progress.step)
    return progress


def _finish(run: _SftRun, progress: _Progress, probe_start: float, probe_end: float) -> str:
    """Save the model (or the checkpoint of a cancelled run) and report the outcome."""
    cfg, channel, step = run.cfg, run.channel, progress.step
    work_dir = Path(cfg["work_dir"]).resolve()
    folder = work_dir / ("model" if progress.status == "succeeded" else "checkpoint")
    files = save_model(run.loaded, folder, {"base": run.choice.requested, "job_id": cfg.get("job_id"), "step": step,
                                            "description": run.loaded.description})
    seconds = max(progress.train_time, 1e-9)
    summary = {"steps": step, "total_steps": run.total_steps, "first_loss": progress.first_loss,
               "final_loss": progress.last_loss, "train_set_loss_start": round(probe_start, 4),
               "train_set_loss_end": round(probe_end, 4), "tokens": progress.tokens,
               "train_seconds": round(progress.train_time, 2), "threads": cfg.get("threads"),
               "tokens_per_second": round(progress.tokens / seconds, 1),
               "padded_tokens_per_second": round(progress.padded / seconds, 1),
               "peak_rss_mb": round(channel.report_memory(), 1)}
    file_list = [{"path": str(p.relative_to(work_dir)), "bytes": p.stat().st_size} for p in files]
    if progress.status == "cancelled":
        channel.result(checkpoint=str(folder), checkpoint_step=step, files=file_list, training=summary)
        channel.emit("sft.training.cancelled", f"Cancelled at step {step}/{run.total_steps}; checkpoint kept in "
                     f"{folder}", {"step": step, "checkpoint": str(folder)}, level="warning")
        return progress.status
    channel.result(fine_tuned_model=cfg["fine_tuned_model"], model_path=str(folder), files=file_list,
                   training=summary)
    channel.emit("sft.training.finish", f"Finished {step} steps: loss {progress.first_loss:.4f} -> "
                 f"{progress.last_loss:.4f} ({summary['tokens_per_second']:,.0f} tokens/s); saved "
                 f"{cfg['fine_tuned_model']}", {**summary, "fine_tuned_model": cfg["fine_tuned_model"]})
    return progress.status


def run_sft(cfg: dict[str, Any], channel: Channel) -> str:
    """Train; returns "succeeded" or "cancelled" (a checkpoint is saved either way)."""
    choice = _model_choice(cfg)
    device = choose_device()
    loaded = load_model(choice, sequence_length=int(cfg["sequence_length"]), seed=int(cfg.get("seed", 0)),
                        tiny_overrides=cfg.get("tiny") or {})
    notes: list[str] = []
    if choice.kind == "local" and isinstance(loaded.tokenizer, HfChatTokenizer):
        if importlib.util.find_spec("trl") is not None:
            from synth_nb.local.training.sft_trl import run_sft_trl  # imports trl and datasets (seconds)

            return run_sft_trl(cfg, channel, choice, loaded, device)
        notes.append("TRL is not installed (pip install 'synth-nb[real-llm]'): trained with the built-in loop")
    run = _prepare(cfg, channel, choice, loaded, device, notes)
    _announce(run)
    probe = run.rng.sample(run.train, min(len(run.train), 256))  # fixed subset: loss before vs after, free of batch noise
    probe_start = _evaluate(run.loaded.model, probe, run.batch_size, run.pad_id, run.device)
    run.sampler.emit(run.channel, 0)
    progress = _train(run)
    probe_end = _evaluate(run.loaded.model, probe, run.batch_size, run.pad_id, run.device)
    return _finish(run, progress, probe_start, probe_end)


def _report_validation(run: _SftRun, step: int) -> None:
    channel, val = run.channel, run.val
    val_loss = _evaluate(run.loaded.model, val, run.batch_size, run.pad_id, run.device)
    channel.metric("val.loss", step, val_loss)
    channel.emit("sft.validation.summary", f"step {step} val.loss={val_loss:.4f}",
                 {"step": step, "val_loss": val_loss, "n": len(val)})
