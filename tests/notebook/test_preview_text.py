"""``preview_text`` and ``preview_layout``: the masked text preview used where widgets cannot render."""

from __future__ import annotations

from pathlib import Path

from _wizard_support import CANARIES, CANARY_ENV, CANARY_SYNTH
from minimal_configs import MINIMAL_GEPA

from synth_nb.errors import ConfigError
from synth_nb.flows import get_flow
from synth_nb.pipeline import Prepared
from synth_nb.pipeline.preview import (
    FOLDED_NOTE,
    preview_text,
    secrets_rows,
    source_words,
    warning_lines,
)
from synth_nb.pipeline.preview_layout import (
    fold_summary,
    human_size,
    payload_lines,
    payload_text,
    step_line,
    step_rows,
)
from synth_nb.plan import Plan, Step
from synth_nb.secrets import resolve_secrets


def test_secret_rows_show_source_and_mask_and_list_missing_keys(tmp_path: Path) -> None:
    bundle = resolve_secrets(environ={"SYNTH_API_KEY": CANARY_SYNTH}, cwd=tmp_path)
    rows = {r["name"]: r for r in secrets_rows(bundle, ("SYNTH_API_KEY", "ENVIRONMENT_API_KEY"))}
    assert rows["SYNTH_API_KEY"] == {"name": "SYNTH_API_KEY", "masked": "••••" + CANARY_SYNTH[-4:],
                                     "source": "environment", "where": "found in the kernel's environment",
                                     "found": True}
    assert rows["ENVIRONMENT_API_KEY"]["found"] is False
    assert "ENVIRONMENT_API_KEY" not in {r["name"] for r in secrets_rows(bundle)}  # not required: not listed
    assert secrets_rows(None) == []


def test_preview_text_names_the_config_keys_and_error_without_values(tmp_path: Path) -> None:
    bundle = resolve_secrets(environ={"SYNTH_API_KEY": CANARY_SYNTH, "ENVIRONMENT_API_KEY": CANARY_ENV},
                             cwd=tmp_path)
    item = Prepared(path=tmp_path / "sft.toml", secrets=bundle, error=ConfigError("[job].data: missing"))
    text = preview_text([item], backend_url="http://127.0.0.1:9/api")
    assert text.splitlines()[0] == "Backend: http://127.0.0.1:9/api"
    assert "== sft.toml" in text and "SYNTH_API_KEY: ••••" in text and "error: [job].data: missing" in text
    assert "(?)" not in text and "== sft.toml  (not loaded: see the error below)" in text
    assert not any(c in text for c in CANARIES)


def test_sources_read_as_plain_words(tmp_path: Path) -> None:
    assert source_words(f".env:{tmp_path / '.env'}", tmp_path) == "found in .env"
    assert source_words(f".env:{tmp_path / '.env'}", tmp_path / "sub") == "found in ../.env"
    assert source_words("modal:team") == "found in Modal secret team"
    assert source_words("local backend") == "provided by the embedded local backend"
    assert (source_words("local backend (its example task apps)")
            == "provided by the embedded local backend for its example task apps")
    assert source_words("pasted") == "pasted into the wizard"


def test_long_integer_lists_fold_and_uploads_name_their_file(tmp_path: Path) -> None:
    preview = {"body": {"train_seeds": list(range(80)), "val_seeds": [3, 9, 27] + list(range(30, 40)),
                        "few": [1, 2, 3]}}
    lines = payload_lines(preview)
    folds = {line["fold"] for line in lines if "fold" in line}
    assert folds == {"80 seeds: 0…79", "13 seeds: 3, 9, 27, …, 39"}
    text = payload_text(lines)
    assert '"train_seeds": [80 seeds: 0…79],' in text and '"few": [' in text
    assert len(text.splitlines()) == len(lines) < 20
    assert fold_summary("rounds", list(range(12))) == "12 numbers: 0…11"

    data = tmp_path / "train.jsonl"
    data.write_text("x" * 2048)
    plan = Plan(flow="sft", endpoints=get_flow("sft").endpoints, algorithm=None, steps=[
        Step("POST", "/files", {"purpose": "fine-tune", "limit_lines": 5}, kind="upload", upload=data,
             description="upload training data")])
    (row,) = step_rows(plan, tmp_path)
    assert (row["file"], row["size"], row["limit"]) == ("train.jsonl", "2.0 KiB", 5)
    assert step_line(row) == "POST /files: uploads train.jsonl (2.0 KiB), first 5 lines — upload training data"
    assert human_size(512) == "512 B" and human_size(3 * 1024 * 1024) == "3.0 MiB"


def test_preview_text_lists_plan_warnings_and_folds_seeds(tmp_path: Path) -> None:
    from synth_nb import pipeline

    seeds = ", ".join(str(i) for i in range(80))
    config = tmp_path / "gepa.toml"
    config.write_text(MINIMAL_GEPA.replace("train_seeds = [0, 1, 2]", f"train_seeds = [{seeds}]")
                      + "\n[prompt_learning.gepa]\nbudgett = 10\n")
    target = pipeline.resolve_target("http://127.0.0.1:9", start_local=False)
    overrides = pipeline.build_overrides({"examples": 3}, target)
    sources = pipeline.SecretSources(environ={"SYNTH_API_KEY": CANARY_SYNTH, "ENVIRONMENT_API_KEY": CANARY_ENV},
                                     cwd=tmp_path)
    item = pipeline.prepare_config(config, overrides=overrides, target=target, sources=sources)
    assert item.ok, item.error
    text = preview_text([item], backend_url=target.url)
    assert "warning: unknown key prompt_learning.gepa.budgett" in text
    assert "warning: --examples is ignored for prompt learning jobs" in text
    assert "[80 seeds: 0…79]" in text and FOLDED_NOTE in text
    assert "1. POST /prompt-learning/online/jobs — create the GEPA" in text
    assert "SYNTH_API_KEY: ••••" in text and "found in the kernel's environment" in text
    assert warning_lines([item])[0].startswith("warning: gepa.toml: unknown key prompt_learning.gepa.budgett")
    assert not any(c in text for c in CANARIES)
