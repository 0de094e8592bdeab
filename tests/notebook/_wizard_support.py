"""A notebook folder with training configs and canary secrets, shared by the magic/wizard tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from minimal_configs import MINIMAL_GEPA, MINIMAL_SFT

#: canary values: if one of these shows up in a trait, an output or a saved notebook, a secret leaked
CANARY_SYNTH = "sk-canary-SYNTH-7f3a9c1e5b2d"
CANARY_ENV = "env-canary-TASK-4e8b2a6c0d9f"
CANARY_PASTED = "pasted-canary-KEY-1c5e9a3f7b0d"
CANARIES = (CANARY_SYNTH, CANARY_ENV, CANARY_PASTED)

SFT = MINIMAL_SFT
GEPA = MINIMAL_GEPA

BROKEN_RL = """\
[algorithm]
type = "online"
method = "policy_gradient"
variety = "gspo"

[model]
base = "Qwen/Qwen3-4B"
"""


def make_project(folder: Path, *, env_file: bool = True) -> Path:
    """``sft.toml`` + ``train.jsonl``, ``gepa.toml``, an invalid ``broken.toml`` and a ``.env``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sft.toml").write_text(SFT)
    (folder / "gepa.toml").write_text(GEPA)
    (folder / "broken.toml").write_text(BROKEN_RL)
    rows = [{"messages": [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]}
            for i in range(4)]
    (folder / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    if env_file:
        (folder / ".env").write_text(f"SYNTH_API_KEY={CANARY_SYNTH}\nENVIRONMENT_API_KEY={CANARY_ENV}\n")
    return folder


def tick(wizard: Any, *paths: str) -> Any:
    """Tick configs on step 1 as the user does (with several valid configs the wizard ticks none).

    Applied at once only on the wizard's loop: call it from an async test.
    """
    wizard.selected = list(paths)
    return wizard


def clean_environ() -> dict[str, str]:
    """An environment with no Synth keys, so only the project's files count."""
    import os

    drop = {"SYNTH_API_KEY", "ENVIRONMENT_API_KEY", "SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_BACKEND_URL"}
    return {k: v for k, v in os.environ.items() if k not in drop}
