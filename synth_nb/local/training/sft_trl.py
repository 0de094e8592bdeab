"""SFT of a real model with TRL's ``SFTTrainer`` inside the worker (LoRA through peft when the config asks).

Used for every model the job found on disk (a folder, the Hugging Face cache, an earlier job's artifact) with a
Hugging Face tokenizer. The tiny random-init stand-in (byte tokenizer, no Hugging Face tokenizer to give TRL)
keeps the own loop in ``sft_loop``. Each chat example becomes a prompt (every message before the last assistant
reply) and a completion (that reply): TRL applies the tokenizer's chat template (a plain role-tag template when
the model has none) and learns the completion only. A ``TrainerCallback`` streams the same events and metrics
as the own loop (``train.loss`` per step, ``val.loss`` and ``sft.validation.summary`` per evaluation,
``sft.progress``) and stops the trainer on a cancel; the model (or the LoRA adapter) and its tokenizer are
saved to ``<work_dir>/model`` as before. The device is CUDA or MPS when present (bf16 where supported), else
the CPU (``device``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from datasets import Dataset
from transformers import TrainerCallback
from trl import SFTConfig, SFTTrainer

from synth_nb.local.training.channel import Channel
from synth_nb.local.training.chat_data import load_chat_jsonl
from synth_nb.local.training.device import Device
from synth_nb.local.training.model_choice import ModelChoice
from synth_nb.local.training.models import LoadedModel, save_model
from synth_nb.local.training.sft_samples import SAMPLE_PROMPTS, SampleProbe

__all__ = ["ROLE_TAG_TEMPLATE", "prompt_completion", "run_sft_trl"]

#: for models without a chat template: the role tags the own loop and the RL worker use, each message closed by eos
ROLE_TAG_TEMPLATE = ("{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{{ eos_token }}{% endfor %}"
                     "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")


def prompt_completion(conversations: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """TRL's conversational prompt/completion rows: the completion is the last assistant reply."""
    rows = []
    for messages in conversations:
        last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
        if last is None:
            continue
        plain = [{"role": str(m.get("role")), "content": str(m.get("content") or "")} for m in messages[: last + 1]]
        rows.append({"prompt": plain[:-1], "completion": plain[-1:]})
    return rows


class _Stream(TrainerCallback):
    """Trainer logs -> the worker's events and metrics; a cancel stops training at the next step."""

    def __init__(self, channel: Channel, sampler: SampleProbe | None = None) -> None:
        self.channel = channel
        #: the fixed prompts answered at each evaluation (``sft_samples``)
        self.sampler = sampler
        self.model: Any = None
        self.first_loss: float | None = None
        self.last_loss = float("nan")
        self.evaluated_at: int | None = None
        self.started = time.perf_counter()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.channel.cancelled.is_set():
            control.should_training_stop = True
        return control

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        logs = logs or {}
        step, total = int(state.global_step), int(state.max_steps)
        if "loss" in logs:
            loss = float(logs["loss"])
            self.first_loss = loss if self.first_loss is None else self.first_loss
            self.last_loss = loss
            self.channel.metric("train.loss", step, loss, {"epoch": logs.get("epoch")})
            tokens = getattr(state, "num_input_tokens_seen", 0) or 0
            seconds = max(time.perf_counter() - self.started, 1e-9)
            self.channel.emit("sft.progress", f"step {step}/{total} loss={loss:.4f}",
                              {"step": step, "total_steps": total, "loss": loss, "epoch": logs.get("epoch"),
                               "learning_rate": logs.get("learning_rate"),
                               "tokens_per_second": round(tokens / seconds, 1) if tokens else None})
        if "eval_loss" in logs:
            val = float(logs["eval_loss"])
            self.evaluated_at = step
            self.channel.metric("val.loss", step, val)
            self.channel.emit("sft.validation.summary", f"step {step} val.loss={val:.4f}", {"step": step, "val_loss": val})
            if self.sampler is not None and self.model is not None:
                self.sampler.emit(self.channel, step, self.model)


def _tokenizer(loaded: LoadedModel) -> Any:
    tok = loaded.tokenizer.tok  # type: ignore[attr-defined]  # an HfChatTokenizer (checked by the caller)
    if not getattr(tok, "chat_template", None):
        tok.chat_template = ROLE_TAG_TEMPLATE
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def _config(cfg: dict[str, Any], device: Device, has_val: bool) -> SFTConfig:
    eval_steps = int(cfg.get("eval_steps") or 0)
    warmup = float(cfg.get("warmup_ratio") or 0.0)
    return SFTConfig(
        output_dir=str(Path(cfg["work_dir"]) / "trl"), per_device_train_batch_size=int(cfg["batch_size"]),
        per_device_eval_batch_size=int(cfg["batch_size"]), gradient_accumulation_steps=int(cfg.get("grad_accum", 1)),
        learning_rate=float(cfg["learning_rate"]), num_train_epochs=float(cfg["n_epochs"]),
        max_steps=int(cfg["max_steps"]) if cfg.get("max_steps") else -1,
        warmup_steps=warmup if 0 < warmup < 1 else 0, weight_decay=float(cfg.get("weight_decay") or 0.0),
        max_grad_norm=1.0, logging_steps=1, eval_strategy="steps" if has_val and eval_steps else "no",
        eval_steps=eval_steps or None, save_strategy="no", report_to=[], seed=int(cfg.get("seed", 0)),
        data_seed=int(cfg.get("seed", 0)), bf16=device.bf16, use_cpu=device.name == "cpu", disable_tqdm=True,
        dataloader_num_workers=0, max_length=int(cfg["sequence_length"]), completion_only_loss=True,
        include_num_input_tokens_seen=True)


def _peft_config(lora: dict[str, Any] | None) -> Any:
    if not lora:
        return None
    from peft import LoraConfig

    targets = lora.get("target_modules") or "all-linear"
    return LoraConfig(r=int(lora["r"]), lora_alpha=int(lora["alpha"]), lora_dropout=float(lora["dropout"]),
                      target_modules="all-linear" if targets == ["all-linear"] else targets, task_type="CAUSAL_LM")


def run_sft_trl(cfg: dict[str, Any], channel: Channel, choice: ModelChoice, loaded: LoadedModel,
                device: Device) -> str:
    """Train ``loaded`` with SFTTrainer; returns "succeeded" or "cancelled" (a checkpoint is saved either way)."""
    tok = _tokenizer(loaded)
    train_chats = load_chat_jsonl(Path(cfg["train_path"])).examples
    val_chats = load_chat_jsonl(Path(cfg["val_path"]), label="validation file").examples if cfg.get("val_path") else []
    train_rows, val_rows = prompt_completion(train_chats), prompt_completion(val_chats)
    args = _config(cfg, device, bool(val_rows))
    sampler = SampleProbe(loaded, (val_chats or train_chats)[:4 * SAMPLE_PROMPTS], "validation" if val_chats
                          else "train", int(cfg["sequence_length"]))
    stream = _Stream(channel, sampler)
    trainer = SFTTrainer(model=loaded.model, args=args, train_dataset=Dataset.from_list(train_rows),
                         eval_dataset=Dataset.from_list(val_rows) if val_rows else None, processing_class=tok,
                         peft_config=_peft_config(cfg.get("lora")), callbacks=[stream])
    lora = cfg.get("lora")
    description = loaded.description + (f" + LoRA r={lora['r']} alpha={lora['alpha']}" if lora else "")
    trainable = sum(p.numel() for p in trainer.model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in trainer.model.parameters())
    channel.emit("sft.training.started",
                 f"Training {description} with TRL's SFTTrainer on {device.description}: {choice.reason}. "
                 f"{len(train_rows)} examples, {trainer.state.max_steps or 'epoch-bound'} steps",
                 {"model": description, "requested_model": choice.requested, "model_kind": choice.kind,
                  "model_source": choice.source, "reason": choice.reason, "trainer": "trl.SFTTrainer",
                  "n_params": total, "trainable_params": trainable, "n_examples": len(train_rows),
                  "n_validation": len(val_rows), "batch_size": cfg["batch_size"],
                  "learning_rate": cfg["learning_rate"], "sequence_length": cfg["sequence_length"],
                  "threads": cfg.get("threads"), **device.describe()})
    stream.model = trainer.model
    sampler.emit(channel, 0, trainer.model)
    started = time.perf_counter()
    output = trainer.train()
    seconds = time.perf_counter() - started
    status = "cancelled" if channel.cancelled.is_set() else "succeeded"
    if val_rows and status == "succeeded" and stream.evaluated_at != trainer.state.global_step:
        trainer.evaluate()  # the final val.loss (and samples), through the callback
    elif status == "succeeded" and stream.evaluated_at != trainer.state.global_step:
        sampler.emit(channel, trainer.state.global_step, trainer.model)
    work_dir = Path(cfg["work_dir"]).resolve()
    folder = work_dir / ("model" if status == "succeeded" else "checkpoint")
    loaded.model = trainer.model
    files = save_model(loaded, folder, {"base": choice.requested, "job_id": cfg.get("job_id"),
                                        "step": trainer.state.global_step, "description": description,
                                        "trainer": "trl.SFTTrainer"})
    tokens = int(getattr(trainer.state, "num_input_tokens_seen", 0) or 0)
    summary = {"steps": trainer.state.global_step, "total_steps": trainer.state.max_steps,
               "first_loss": stream.first_loss, "final_loss": stream.last_loss,
               "train_loss_mean": round(float(output.training_loss), 4), "tokens": tokens,
               "train_seconds": round(seconds, 2), "tokens_per_second": round(tokens / max(seconds, 1e-9), 1),
               "threads": cfg.get("threads"), "trainer": "trl.SFTTrainer", **device.describe(),
               "peak_rss_mb": round(channel.report_memory(), 1)}
    file_list = [{"path": str(p.relative_to(work_dir)), "bytes": p.stat().st_size} for p in sorted(set(files) | {
        p for p in folder.rglob("*") if p.is_file()})]
    if status == "cancelled":
        channel.result(checkpoint=str(folder), checkpoint_step=summary["steps"], files=file_list, training=summary)
        channel.emit("sft.training.cancelled", f"Cancelled at step {summary['steps']}/{summary['total_steps']}; "
                     f"checkpoint kept in {folder}", {"step": summary["steps"], "checkpoint": str(folder)},
                     level="warning")
        return status
    channel.result(fine_tuned_model=cfg["fine_tuned_model"], model_path=str(folder), files=file_list,
                   training=summary)
    channel.emit("sft.training.finish", f"Finished {summary['steps']} steps: loss {stream.first_loss or float('nan'):.4f}"
                 f" -> {stream.last_loss:.4f}; saved {cfg['fine_tuned_model']}",
                 {**summary, "fine_tuned_model": cfg["fine_tuned_model"]})
    return status
