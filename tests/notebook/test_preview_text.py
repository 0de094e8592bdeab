"""``synth_nb.notebook.preview_text``: the masked plain-text preview used where widgets cannot render."""

from __future__ import annotations

from pathlib import Path

from _wizard_support import CANARIES, CANARY_ENV, CANARY_SYNTH

from synth_nb.errors import ConfigError
from synth_nb.notebook.preview_text import preview_text, secrets_rows
from synth_nb.pipeline import Prepared
from synth_nb.secrets import resolve_secrets


def test_secret_rows_show_source_and_mask_and_list_missing_keys(tmp_path: Path) -> None:
    bundle = resolve_secrets(environ={"SYNTH_API_KEY": CANARY_SYNTH}, cwd=tmp_path)
    rows = {r["name"]: r for r in secrets_rows(bundle, ("SYNTH_API_KEY", "ENVIRONMENT_API_KEY"))}
    assert rows["SYNTH_API_KEY"] == {"name": "SYNTH_API_KEY", "masked": "••••" + CANARY_SYNTH[-4:],
                                     "source": "environment", "found": True}
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
    assert not any(c in text for c in CANARIES)
