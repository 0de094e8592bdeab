"""SFT plan: dataset check, upload(s), ``POST /learning/jobs``, then ``/start``.

The job body matches synth-ai 0.2.24's builder for every config it accepts. Deliberate differences:
``--dataset`` alone satisfies a config without ``[job].data``; ``--model`` replaces ``[job].model``;
relative dataset paths are looked up beside the config first (then the working directory); the JSONL is
checked more strictly (``synth_nb.flows.sft.dataset``) when the plan is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synth_nb.errors import DatasetError, OverrideError
from synth_nb.flows import catalogue
from synth_nb.flows._common import (
    absolute_path,
    backend_for,
    check_experimental,
    config_error,
    idempotency_for,
    resolve_data_path,
    section,
    start_warnings,
)
from synth_nb.flows.base import ConfigLike, Flow
from synth_nb.flows.overrides import Overrides, shown_flag_value
from synth_nb.flows.sft.dataset import validate_jsonl
from synth_nb.flows.sft.jobs import JOBS
from synth_nb.plan import Plan, Step
from synth_nb.secrets import SecretBundle
from synth_nb.secrets.redact import redact

ENDPOINTS = JOBS.endpoints

#: hyper-parameters sent when present, in 0.2.24's order (``n_epochs`` is always sent, default 1)
_HP_KEYS = ("batch_size", "global_batch", "per_device_batch", "gradient_accumulation_steps",
            "sequence_length", "learning_rate", "warmup_ratio", "train_kind")
_POSITIVE_INTS = ("n_epochs", "batch_size", "global_batch", "per_device_batch", "gradient_accumulation_steps",
                  "sequence_length")
#: ``[training.validation]`` keys copied into ``hyperparameters`` with these defaults
_VALIDATION_DEFAULTS: dict[str, Any] = {"evaluation_strategy": "steps", "eval_steps": 0,
                                        "save_best_model_at_end": True, "metric_for_best_model": "val.loss",
                                        "greater_is_better": False}

__all__ = ["ENDPOINTS", "build_body", "build_plan"]


def _hyperparameters(config: ConfigLike, raw: dict[str, Any]) -> dict[str, Any]:
    hp = section(raw, "hyperparameters")
    block: dict[str, Any] = {"n_epochs": hp.get("n_epochs", 1)}
    block.update({k: hp[k] for k in _HP_KEYS if k in hp})
    for key in _POSITIVE_INTS:
        value = block.get(key)
        if key in block and (isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
                             or int(value) != value):
            raise config_error(config, f"hyperparameters.{key}", f"must be a whole number > 0, got {value!r}")
        if key in block:
            block[key] = int(block[key])
    for key, low_ok in (("learning_rate", False), ("warmup_ratio", True)):
        value = block.get(key)
        if key in block and (isinstance(value, bool) or not isinstance(value, int | float)
                             or value < 0 or (value == 0 and not low_ok) or (key == "warmup_ratio" and value > 1)):
            rule = "between 0 and 1" if key == "warmup_ratio" else "a number > 0"
            raise config_error(config, f"hyperparameters.{key}", f"must be {rule}, got {value!r}")
    if "train_kind" in block and not isinstance(block["train_kind"], str):
        raise config_error(config, "hyperparameters.train_kind", "must be a string")
    if isinstance(hp.get("parallelism"), dict):
        block["parallelism"] = hp["parallelism"]
    return block


def build_body(config: ConfigLike, model: str, *, with_validation_file: bool) -> dict[str, Any]:
    """The ``POST /learning/jobs`` body; file ids are ``{"$ref": ...}`` placeholders."""
    raw = config.raw
    hyper = _hyperparameters(config, raw)
    compute = section(raw, "compute")
    data = section(raw, "data")
    training = section(raw, "training")
    effective: dict[str, Any] = {
        "compute": {k: compute[k] for k in ("gpu_type", "gpu_count", "nodes") if k in compute},
        "data": {"topology": data["topology"] if isinstance(data.get("topology"), dict) else {}},
        "training": {k: training[k] for k in ("mode", "use_qlora") if k in training},
    }
    validation = training.get("validation")
    if isinstance(validation, dict):
        for key, default in _VALIDATION_DEFAULTS.items():
            hyper[key] = validation.get(key, default)
        hyper["eval_steps"] = int(hyper["eval_steps"] or 0)
        hyper["save_best_model_at_end"] = bool(hyper["save_best_model_at_end"])
        hyper["greater_is_better"] = bool(hyper["greater_is_better"])
        effective["training"]["validation"] = {"enabled": bool(validation.get("enabled", True))}
    if with_validation_file:
        effective["data"]["validation_files"] = [{"$ref": "validation_file"}]
    return {
        "model": model,
        "hyperparameters": hyper,
        "training_type": "sft_offline",
        "metadata": {"effective_config": effective},
        "training_file_id": {"$ref": "training_file"},
    }


def _model(config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> str:
    job = section(config.raw, "job")
    given = overrides.model if overrides.model is not None else job.get("model")
    if not isinstance(given, str) or not given.strip():
        raise config_error(config, "job.model", "no base model", hint="set [job].model or pass --model")
    canonical = catalogue.canonical_model(given)
    if canonical is None:
        why = (f"{shown_flag_value(given, secrets.values())} is not a supported SFT base model (fine-tuned ids cannot be fine-tuned again); "
               f"supported: {', '.join(catalogue.SFT_MODELS[:4])}, ...")
        if overrides.model is not None:
            raise OverrideError(f"--model {why}", field="model")
        raise config_error(config, "job.model", why)
    check_experimental(config, canonical, "job.model", overrides, secrets)
    return canonical


def _dataset(config: ConfigLike, overrides: Overrides, secrets: SecretBundle, warnings: list[str]) -> Path:
    if overrides.dataset is not None:
        path = absolute_path(Path(overrides.dataset).expanduser())
        if not path.is_file():  # a key pasted as the path must not come back in the message
            raise DatasetError("--dataset file not found", path=redact(str(path), secrets.values()),
                               hint="check the path")
        return path
    named = named_dataset(config)
    if named is None:
        raise config_error(config, "job.data", "no training dataset",
                           hint="set [job].data = \"train.jsonl\" or pass --dataset PATH")
    key, value = named
    path = resolve_data_path(config, value, warnings, "dataset")
    if not path.is_file():
        raise DatasetError(f"dataset file not found (from [{key}] = {value!r})", path=path, hint=MISSING_DATASET_HINT)
    return path


MISSING_DATASET_HINT = "fix the path (relative paths are read beside the config) or pass --dataset"


def named_dataset(config: ConfigLike) -> tuple[str, str] | None:
    """``("job.data", "train.jsonl")``: the training dataset the config names, and where; None when none."""
    job = section(config.raw, "job")
    value = job.get("data") or job.get("data_path")
    if not isinstance(value, str) or not value.strip():
        return None
    return ("job.data" if job.get("data") else "job.data_path"), value


def _validation_file(config: ConfigLike, warnings: list[str]) -> Path | None:
    value = section(config.raw, "data").get("validation_path")
    if not isinstance(value, str) or not value.strip():
        return None
    path = resolve_data_path(config, value, warnings, "validation dataset")
    if not path.is_file():
        warnings.append(f"validation dataset {path} not found; the job will run without validation")
        return None
    return path


def build_plan(flow: Flow, config: ConfigLike, overrides: Overrides, secrets: SecretBundle) -> Plan:
    """Validate the dataset(s) locally, then: upload training file, [upload validation file], create, start."""
    warnings = start_warnings(flow, config, overrides)
    if overrides.dataset is not None:  # the config's "no [job].data" advice is answered by --dataset
        warnings = [w for w in warnings if not w.startswith("no [job].data")]
    model = _model(config, overrides, secrets)
    dataset = _dataset(config, overrides, secrets, warnings)
    report = validate_jsonl(dataset, limit=overrides.examples).raise_for_problems()
    if overrides.examples is not None and report.examples < overrides.examples:
        warnings.append(f"--examples {overrides.examples}: the dataset only has {report.examples} examples")
    if report.examples_with_images and "-VL-" not in model:
        warnings.append(f"{report.examples_with_images} example(s) contain images but {model} is not a "
                        "vision-language (Qwen3-VL) model")
    validation = _validation_file(config, warnings)
    form: dict[str, Any] = {"purpose": "fine-tune"}
    if overrides.examples is not None:
        form["limit_lines"] = overrides.examples  # read by the uploader, not sent as a form field
    steps = [Step("POST", "/files", form, kind="upload", upload=dataset, ref="training_file",
                  description=f"upload training data; checked locally: {report.summary()}")]
    if validation is not None:
        checked = "not checked (not a .jsonl file)"
        if validation.suffix == ".jsonl":
            checked = "checked locally: " + validate_jsonl(validation).raise_for_problems().summary()
        steps.append(Step("POST", "/files", {"purpose": "fine-tune"}, kind="upload", upload=validation,
                          ref="validation_file", description=f"upload validation data; {checked}"))
    key = idempotency_for(overrides)
    body = build_body(config, model, with_validation_file=validation is not None)
    steps.append(Step("POST", ENDPOINTS.create, body, headers={"Idempotency-Key": key},
                      description=f"create the SFT job ({model})"))
    steps.append(Step("POST", ENDPOINTS.start or "/learning/jobs/{job_id}/start", {},
                      description="start the job"))
    return Plan(flow=flow.name, endpoints=flow.endpoints,
                algorithm=config.algorithm, steps=steps, config_path=config.path,
                backend_url=backend_for(overrides), idempotency_key=key, warnings=warnings,
                secrets=secrets.values())
