"""A proposer model's calls are in the estimate: counted by GEPA's schedule, sized by the dry proposal's call.

The proposer here is a model behind a small OpenAI-compatible server on 127.0.0.1 (the embedded backend calls
it as it would a hosted one): it appends a sentence to the instruction and reports 3,000 prompt and 200
completion tokens per call, so its calls are most of the job's tokens. The estimate made by ``--check`` is
within 30 % of the tokens the real job reports, proposer tokens included, and names no part as not
estimated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import LOCAL_GEPA
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from synth_nb import pipeline
from synth_nb.cli.main import main
from synth_nb.local.examples._serve import ServerHandle, serve_in_thread

USAGE = {"prompt_tokens": 3000, "completion_tokens": 200, "total_tokens": 3200}


@pytest.fixture()
def proposer_model() -> Iterator[ServerHandle]:
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        current = body["messages"][-1]["content"].split("```")[1].strip()
        reply = f"```\n{current} Answer with the single best intent.\n```"
        return JSONResponse({"id": "chatcmpl-stub", "object": "chat.completion", "model": "stub", "usage": USAGE,
                             "choices": [{"index": 0, "finish_reason": "stop",
                                          "message": {"role": "assistant", "content": reply}}]})

    with serve_in_thread(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])]),
                         name="proposer-model") as server:
        yield server


def test_the_proposer_models_calls_are_estimated(folder: Path, backend: Any, task_app: Any,
                                                 proposer_model: ServerHandle,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    config = LOCAL_GEPA.format(task_url=task_app.url, budget=60) + (
        f'\n[prompt_learning.gepa.mutation]\nllm_model = "gpt-4.1-mini"\nllm_provider = "openai"\nllm_inference_url = "{proposer_model.url}/v1"\n')
    (folder / "gepa.toml").write_text(config)
    pipeline.use_local_backend(backend)
    try:
        assert main(["train", "--config", "gepa.toml", "--backend", "local", "--check", "--json"]) == 0
        card = json.loads(capsys.readouterr().out)
        assert main(["train", "--config", "gepa.toml", "--backend", "local"]) == 0, capsys.readouterr().err
        real = _reported_tokens(backend)
    finally:  # also stops the backend handed over
        pipeline.stop_local_backend()
    proposal, estimate = card["dry_rollout"]["proposal"], card["estimate"]
    assert proposal["proposer"] == "configured" and proposal["proposer_tokens"] == 3200
    assert not estimate["tokens_floor"] and not estimate["not_estimated"]
    assert "proposer calls" in estimate["tokens_how"], estimate
    # a search that calls a model beyond the backend is not run whole by the check (it would pay for its calls)
    assert proposal["rehearsal_seconds"] is None and ("; the whole search was not run once: the job calls its "
                                                      "proposer model gpt-4.1-mini,") in estimate["wall_how"], estimate
    assert real["mutation"] >= 3200 * 3, real  # the proposer model was called, and is most of the tokens
    assert abs(estimate["tokens"] - real["total"]) <= 0.3 * real["total"], (estimate, real)


def _reported_tokens(backend: Any) -> dict[str, int]:
    """The job's own token counts at its end: all of them, and the proposer model's."""
    jobs = f"{backend.url}/api/prompt-learning/online/jobs"
    with httpx.Client(headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=60) as http:
        listed = http.get(jobs, params={"limit": 5}).json()
        (job,) = listed.get("jobs", listed) if isinstance(listed, dict) else listed
        events = http.get(f"{jobs}/{job['job_id']}/events", params={"limit": 5000}).json()
    events = events.get("events", events) if isinstance(events, dict) else events
    (done,) = [e["data"] for e in events if e["type"] == "prompt.learning.completed"]
    return {"total": done["token_count_total"], "mutation": done["token_count_mutation"]}
