"""Local SFT: trains a real (small) causal LM on the job's uploaded chat JSONL in a worker process.

The model is the local Hugging Face folder the config names (LoRA through peft when asked), else a tiny
random-init GPT-2 with a byte tokenizer: nothing is ever downloaded. Events and metrics use the 0.2.24
names (``sft.training.started``, ``sft.progress``, ``train.loss``, ``val.loss``, ``sft.validation.summary``,
``sft.training.finish``, ``sft.job.completed``); the artifact lands in the job's work dir and its id in
``fine_tuned_model``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth_nb.local.errors import ChatDataError, ExecutorInputError, TrainingFailed, UnknownLocalModel
from synth_nb.local.executors._training import announce_model, local_settings, number, run_worker, section
from synth_nb.local.executors.base import JobContext
from synth_nb.local.training.chat_data import load_chat_jsonl
from synth_nb.local.training.model_choice import ModelChoice, choose_model

__all__ = ["SftExecutor", "sft_settings"]

_TINY_LR = 3e-3
_LOCAL_LR = 5e-5


def _lora(body: dict[str, Any]) -> dict[str, Any] | None:
    """LoRA settings when the config asks for them (training.mode lora/qlora, train_kind peft, lora_rank)."""
    hp = section(body, "hyperparameters")
    training = section(body, "metadata", "effective_config", "training")
    table: dict[str, Any] = training["lora"] if isinstance(training.get("lora"), dict) else {}
    mode = str(training.get("mode") or "").lower()
    wanted = (mode in ("lora", "qlora") or bool(training.get("use_qlora"))
              or str(hp.get("train_kind") or "").lower() in ("peft", "lora") or "lora_rank" in hp or bool(table))
    if not wanted:
        return None
    targets = table.get("target_modules") or hp.get("lora_target_modules")
    if targets is not None and (not isinstance(targets, list) or not all(isinstance(t, str) for t in targets)):
        raise ExecutorInputError("lora target_modules must be a list of module names")
    return {"r": number(table, "r", "training.lora", None) or number(hp, "lora_rank", "hyperparameters", 8),
            "alpha": number(table, "alpha", "training.lora", None) or number(hp, "lora_alpha", "hyperparameters", 16),
            "dropout": number(table, "dropout", "training.lora", None, kind=float, strict=False)
            or number(hp, "lora_dropout", "hyperparameters", 0.0, kind=float, strict=False),
            "target_modules": targets}


def sft_settings(body: dict[str, Any], choice: ModelChoice) -> dict[str, Any]:
    """Training settings from the create body (the 0.2.24 payload), with local defaults."""
    hp = section(body, "hyperparameters")
    where = "hyperparameters"
    tiny = choice.kind == "tiny"
    batch = number(hp, "batch_size", where, None) or number(hp, "per_device_batch", where, None) or 16
    validation = section(body, "metadata", "effective_config", "training", "validation")
    return {
        "n_epochs": number(hp, "n_epochs", where, 1),
        "batch_size": batch,
        "grad_accum": number(hp, "gradient_accumulation_steps", where, 1),
        "learning_rate": number(hp, "learning_rate", where, _TINY_LR if tiny else _LOCAL_LR, kind=float),
        "warmup_ratio": number(hp, "warmup_ratio", where, 0.0, kind=float, strict=False),
        "weight_decay": number(hp, "weight_decay", where, 0.0, kind=float, strict=False),
        "sequence_length": number(hp, "sequence_length", where, 256 if tiny else 512),
        "max_steps": number(hp, "max_steps", where, None),
        "eval_steps": number(hp, "eval_steps", where, 0, strict=False),
        "validation_enabled": validation.get("enabled", True) is not False,
        "lora": _lora(body),
    }


def _validation_file_id(body: dict[str, Any]) -> str | None:
    files = section(body, "metadata", "effective_config", "data").get("validation_files")
    if isinstance(files, list) and files and isinstance(files[0], str):
        return files[0]
    for key in ("validation_file_id", "validation_file"):
        if isinstance(body.get(key), str) and body[key]:
            return str(body[key])
    return None


class SftExecutor:
    name = "sft"

    def validate(self, kind: str, body: dict[str, Any], options: dict[str, Any] | None = None) -> None:
        if kind != "sft":
            raise ExecutorInputError(f"the sft executor runs SFT jobs, not {kind!r}")
        if not isinstance(body.get("training_file_id"), str) or not body["training_file_id"]:
            raise ExecutorInputError("training_file_id is required: upload the JSONL with POST /files first")
        try:
            choice = choose_model(body.get("model") if isinstance(body.get("model"), str) else None)
        except UnknownLocalModel as exc:
            raise ExecutorInputError(str(exc)) from None
        sft_settings(body, choice)
        local_settings(body)

    def _fail(self, ctx: JobContext, message: str) -> TrainingFailed:
        ctx.emit("sft.data.invalid", message, {"error": message}, level="error")
        return TrainingFailed(message)

    def _path(self, ctx: JobContext, file_id: str, label: str) -> Path:
        try:
            return Path(ctx.file_path(file_id))
        except KeyError:
            raise self._fail(ctx, f"{label} {file_id} is not on this backend; upload it again") from None

    def run(self, ctx: JobContext) -> None:
        body = ctx.body
        self.validate(ctx.kind, body)
        requested = body.get("model") if isinstance(body.get("model"), str) else None
        try:
            choice = choose_model(requested, artifact_roots=[Path(ctx.work_dir).parent])
        except UnknownLocalModel as exc:
            raise self._fail(ctx, str(exc)) from None
        model_choice = announce_model(ctx, "sft", choice)
        settings = sft_settings(body, choice)
        train_path = self._path(ctx, body["training_file_id"], "training file")
        val_id = _validation_file_id(body) if settings["validation_enabled"] else None
        val_path = self._path(ctx, val_id, "validation file") if val_id else None
        try:
            train = load_chat_jsonl(train_path)
            val = load_chat_jsonl(val_path, label="validation file") if val_path else None
        except ChatDataError as exc:
            raise self._fail(ctx, str(exc)) from None
        skipped = len(train.skipped) + (len(val.skipped) if val else 0)
        ctx.emit("sft.data.validated",
                 f"{len(train.examples)} training examples" + (f", {len(val.examples)} validation" if val else "")
                 + (f"; skipped {skipped} bad lines: {train.skipped_summary()}" if skipped else ""),
                 {"n_train": len(train.examples), "n_validation": len(val.examples) if val else 0,
                  "skipped": [{"line": n, "reason": why} for n, why in train.skipped[:20]]},
                 level="warning" if skipped else "info")
        base = "synth-nb-tiny-gpt2" if choice.kind == "tiny" else (requested or "local")
        fine_tuned = f"{'peft' if settings['lora'] and choice.kind == 'local' else 'ft'}:{base}:{ctx.job_id}"
        local = local_settings(body)
        config = {**settings, **local, "job_id": ctx.job_id, "work_dir": str(ctx.work_dir),
                  "train_path": str(train_path), "val_path": str(val_path) if val_path else None,
                  "fine_tuned_model": fine_tuned, "model_choice": model_choice}
        status, peak = run_worker(ctx, "sft", config, prefix="sft")
        if status == "succeeded":
            ctx.emit("sft.job.completed", f"Fine-tuned model {fine_tuned} is ready",
                     {"fine_tuned_model": fine_tuned, "peak_rss_mb": round(peak, 1)})
