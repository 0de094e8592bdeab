from __future__ import annotations

import pytest

from synth_nb.local.errors import UnknownLocalModel
from synth_nb.local.training.model_choice import artifact_model_dir, choose_model


def test_hub_ids_fall_back_to_the_tiny_model_and_say_why():
    choice = choose_model("Qwen/Qwen3-0.6B")
    assert choice.kind == "tiny"
    assert "never downloads" in choice.reason
    assert choose_model(None).kind == "tiny"


def test_a_model_folder_on_disk_is_used(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    choice = choose_model(str(tmp_path))
    assert choice.kind == "local"
    assert choice.path == tmp_path.resolve()


@pytest.mark.parametrize("name", ["./no/such/model", "/definitely/missing/model", "~/missing-model-dir/"])
def test_a_missing_local_path_is_rejected(name):
    with pytest.raises(UnknownLocalModel, match="does not exist"):
        choose_model(name)


def test_a_folder_without_config_is_rejected(tmp_path):
    with pytest.raises(UnknownLocalModel, match="no config.json"):
        choose_model(str(tmp_path))


def test_fine_tuned_ids_of_earlier_local_jobs_resolve_to_their_artifact(tmp_path):
    model_dir = tmp_path / "job_abc" / "model"
    model_dir.mkdir(parents=True)
    (model_dir / "config.json").write_text("{}")
    assert artifact_model_dir("ft:synth-nb-tiny-gpt2:job_abc", [tmp_path]) == model_dir
    choice = choose_model("ft:synth-nb-tiny-gpt2:job_abc", artifact_roots=[tmp_path])
    assert choice.kind == "local" and choice.path == model_dir
    assert artifact_model_dir("ft:x:job_missing", [tmp_path]) is None
