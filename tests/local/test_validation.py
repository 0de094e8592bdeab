"""Create-body checks: arbitrary JSON never produces a 5xx (property test over the three create routes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from local_backend_helpers import API_KEY

from synth_nb.local import LocalBackend, start_backend

KEYS = ["model", "training_file_id", "training_file", "hyperparameters", "metadata", "auto_start", "data",
        "endpoint_base_url", "config", "compute", "algorithm", "config_body", "overrides", "validation_file",
        "local_executor", "recording", "replay_speed", "prompt_learning", "training_type"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False, width=32),
                    st.sampled_from(["", "sft", "gepa", "replay", "rl", "../x", "http://127.0.0.1:9", "mipro"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                      max_leaves=12)
bodies = st.dictionaries(st.sampled_from(KEYS), values, max_size=6)


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    folder: Path = tmp_path_factory.mktemp("fuzz")
    backend: LocalBackend
    with start_backend(data_dir=folder, api_key=API_KEY, default_executor="replay",
                       executor_options={"replay": {"speed": 1000}}) as backend, httpx.Client(
            base_url=backend.api_url, headers={"Authorization": f"Bearer {API_KEY}"}, trust_env=False) as client:
        yield client


@pytest.mark.parametrize("path", ["/learning/jobs", "/rl/jobs", "/prompt-learning/online/jobs"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies)
def test_any_json_object_gets_a_non_5xx_answer(http: httpx.Client, path: str, body: dict[str, object]) -> None:
    response = http.post(path, json=body)
    assert response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/json")
    if response.status_code >= 400:
        assert isinstance(response.json()["detail"], str)
    else:
        job = response.json()["job_id"]
        http.post(f"{path}/{job}/cancel")
