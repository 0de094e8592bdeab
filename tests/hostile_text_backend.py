"""A backend whose every string is markup: finished jobs (prompt learning, SFT, RL) whose status documents,
events and metrics carry HTML, Markdown links and images, code-fence breakers and math, each of which
sets ``window.__pwned`` if a browser ever runs it.

A real HTTP server (Starlette on uvicorn, 127.0.0.1, a free port) answering GETs at the contract paths;
``serve_hostile_jobs()`` runs it in a thread until the block ends; ``made(bundle)`` reads an output or page as a
browser would act on it (the elements and attributes the backend's text must never become, and the text shown).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

import uvicorn
from markdown_it import MarkdownIt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

KEY = "sk_hostile_text_0000000000000000abcd"
PL_JOB = "pl_hostile0001"
SFT_JOB = "job_hostile0002"
RL_JOB = "job_hostile0003"

#: name -> markup that sets ``window.__pwned`` to the name if it is ever taken for markup and run
PAYLOADS = {
    "img": "<img src=x onerror=\"window.__pwned='img'\">",
    "script": "<script>window.__pwned='script'</script>",
    "link": "[click me](javascript:window.__pwned='link')",
    "image": "![x](javascript:window.__pwned='image')",
    "autolink": "<javascript:window.__pwned='autolink'>",
    "svg": "<svg onload=\"window.__pwned='svg'\"></svg>",
    "details": "<details open ontoggle=\"window.__pwned='details'\">x</details>",
    "tick": "`</code><img src=x onerror=\"window.__pwned='tick'\">`",
    "math": "$\\href{javascript:window.__pwned='math'}{math}$",
    "entity": "&lt;img src=x onerror=&quot;window.__pwned='entity'&quot;&gt;",
}
#: breaks out of a fenced block that uses three backticks, then of a ``<pre>``
FENCE_BREAKER = "```\n</code></pre><img src=x onerror=\"window.__pwned='fence'\">\n```"


MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


class Made(HTMLParser):
    """What a browser would act on in an HTML fragment: elements and attributes a backend's text must never
    become, and the text it shows."""

    def __init__(self, markup: str) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.text = ""
        self._script = False
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._script = tag == "script"
        for name, value in attrs:
            if name.lower().startswith("on"):
                self.found.append(f"<{tag} {name}>")
            if name.lower() in ("href", "src") and (value or "").strip().lower().startswith(("javascript:", "x")):
                self.found.append(f"<{tag} {name}={value}>")
        if tag in ("img", "iframe", "details") and any("pwned" in (v or "") for _, v in attrs):
            self.found.append(f"<{tag}>")

    def handle_data(self, data: str) -> None:
        if self._script and "__pwned" in data:
            self.found.append(f"<script>{data[:60]}")
        if not self._script:
            self.text += data

    def handle_endtag(self, tag: str) -> None:
        self._script = False


def made(bundle: dict[str, Any]) -> Made:
    """The HTML of a mimebundle (its Markdown rendered, if it has no HTML) as a browser would read it."""
    markup = bundle.get("text/html") or MARKDOWN.render(str(bundle.get("text/markdown", "")))
    return Made(markup if isinstance(markup, str) else "".join(markup))


def hostile(*names: str) -> str:
    """The payloads ``names`` (all of them by default) in one string."""
    return " ".join(PAYLOADS[n] for n in (names or tuple(PAYLOADS)))


def _pl_events() -> list[dict[str, Any]]:
    text = hostile()
    events: list[dict[str, Any]] = [
        {"type": "prompt.learning.policy.ready", "message": hostile("img"),
         "data": {"model": hostile("img", "link"), "policy": hostile("script")}},
        {"type": "prompt.learning.proposer.selected", "message": "proposer",
         "data": {"proposer": hostile("image"), "model": hostile("autolink")}},
        {"type": "prompt.learning.task_app.ready", "message": "task app",
         "data": {"task_app_url": "javascript:window.__pwned='url'", "task_id": hostile("svg")}},
        {"type": "prompt.learning.validation.summary", "message": "baseline",
         "data": {"baseline": {"accuracy": 0.4, "seeds": [1, 2]}, "results": []}},
        {"type": "gepa.transformation.proposed", "message": hostile("details"),
         "data": {"generation": 1, "operator": hostile("tick"), "parent_id": hostile("link"),
                  "transformation_id": hostile("img"), "transformation_text": text,
                  "transformation_dict": {"text_replacements": [
                      {"apply_to_role": "system", "old_text": "Classify the query.",
                       "new_text": "Classify " + FENCE_BREAKER + " " + text}]}}},
        {"type": "mipro.instruction.proposed", "message": "instruction",
         "data": {"proposal_id": hostile("tick"), "instruction_text": "first line\n" + text,
                  "transformation_id": "p_002", "parent_id": 0, "operator": hostile("svg"),
                  "transformation_dict": {"text_replacements": [
                      {"apply_to_role": "system", "old_text": "Classify the query.", "new_text": text}]},
                  "proposer_input": FENCE_BREAKER + " " + text, "proposer_output": text + " " + FENCE_BREAKER}},
        {"type": "prompt.learning.proposal.scored", "message": hostile("details"),
         "data": {"proposal": 2, "score": 0.25, "parent_score": 0.5, "accepted": False, "reason": hostile()}},
        {"type": "prompt.learning.best.prompt", "message": "best",
         "data": {"best_score": 0.57, "best_prompt": {"sections": [
             {"role": hostile("img"), "name": hostile("tick"), "content": FENCE_BREAKER + "\n" + text}]}}},
        {"type": "prompt.learning.final.results", "message": "final",
         "data": {"attempted_candidates": [
             {"accuracy": 0.4, "prompt_length": hostile("img"), "parents": [hostile("link")],
              "origin": hostile("script"), "generation": hostile("svg"), "candidate_index": hostile("image"),
              "instance_scores": [1, 0], "seeds": [1, 2]},
             {"accuracy": 0.57, "prompt_length": 20, "instance_scores": [1, 1], "seeds": [1, 2]}],
             "optimized_candidates": [{"score": {"accuracy": 0.57, "prompt_length": hostile("img")},
                                       "payload_kind": hostile("link"), "rank": hostile("svg")}]}},
        {"type": "prompt.learning.completed", "message": hostile("script"),
         "data": {"finish_reason": text, "policy_model": hostile("img"), "rollouts_completed": hostile("svg"),
                  "token_count_total": 1234}},
        {"type": hostile("details"), "level": "error", "message": text, "data": {"error": text}},
    ]
    return [{**event, "seq": n} for n, event in enumerate(events, start=1)]


def _pl_status() -> dict[str, Any]:
    return {"job_id": PL_JOB, "status": "failed", "algorithm": "gepa", "error": hostile(),
            "created_at": hostile("img"), "started_at": hostile("link"), "finished_at": hostile("math"),
            "best_score": 0.57}


def _metrics(name: str) -> list[dict[str, Any]]:
    return [{"name": name, "step": s, "value": 0.4 + 0.05 * s} for s in range(1, 4)]


def routes() -> dict[str, Any]:
    """GET path (under ``/api``) -> the JSON it answers."""
    pl = "/prompt-learning/online/jobs/" + PL_JOB
    sft = "/learning/jobs/" + SFT_JOB
    rl = "/rl/jobs/" + RL_JOB
    return {
        pl: _pl_status(), pl + "/events": {"events": _pl_events()},
        pl + "/metrics": {"points": [*_metrics("gepa.val.accuracy"), *_metrics(hostile("img"))]},
        sft: {"job_id": SFT_JOB, "job_type": "sft", "status": "failed", "error": hostile(), "fine_tuned_model": hostile("tick"),
              "training_file": hostile("img", "link"), "validation_file": FENCE_BREAKER},
        sft + "/events": {"events": [{"seq": 1, "type": "sft.training.started", "message": hostile(), "data": {}},
                                     {"seq": 2, "type": "sft.data.validated", "message": hostile("img"),
                                      "data": {"n_train": 3}}]},
        sft + "/metrics": {"points": _metrics("train.loss")},
        rl: {"job_id": RL_JOB, "job_type": "rl", "status": "failed", "error": hostile(), "notes": FENCE_BREAKER},
        rl + "/events": {"events": [{"seq": 1, "type": "rl.train.failed", "level": "error", "message": hostile(),
                                     "data": {"error": hostile()}}]},
        rl + "/metrics": {"points": _metrics("train.reward")},
    }


def _app(answers: dict[str, Any]) -> Starlette:
    async def answer(request: Request) -> JSONResponse:
        path = request.url.path.removeprefix("/api")
        if path not in answers:
            return JSONResponse({"detail": f"no route {path}"}, status_code=404)
        return JSONResponse(answers[path])

    return Starlette(routes=[Route("/{path:path}", answer, methods=["GET"])])


class _Server(uvicorn.Server):
    def install_signal_handlers(self) -> None:  # it runs in a thread
        pass


@dataclass
class HostileBackend:
    url: str
    key: str = KEY


@contextmanager
def serve_hostile_jobs() -> Iterator[HostileBackend]:
    """The hostile backend on 127.0.0.1 (a free port) until the block ends."""
    server = _Server(uvicorn.Config(_app(routes()), host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), name="hostile-text-backend", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        raise RuntimeError("the hostile backend did not start")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield HostileBackend(f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(timeout=30)
