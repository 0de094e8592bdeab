"""Local SFT figures: tokens/s and loss drop over 300 steps on the tiny model, cancel latency, and how
responsive the backend stays while a job trains. Runs a real embedded backend over HTTP.

    .venv/bin/python benchmarks/sft.py [--steps 300]

Goals: >= 10k tokens/s on the tiny model, >= 50 % loss drop over 300 steps.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_jobs import Backend  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "example_notebooks" / "data"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    backend = Backend()
    try:
        train_id = backend.upload(DATA / "sft_tiny_train.jsonl")
        val_id = backend.upload(DATA / "sft_tiny_val.jsonl")
        body = {"model": "Qwen/Qwen3-0.6B", "training_type": "sft_offline",
                "hyperparameters": {"n_epochs": 1, "batch_size": args.batch_size, "learning_rate": 3e-3,
                                    "max_steps": args.steps, "warmup_ratio": 0.05, "eval_steps": 100},
                "metadata": {"effective_config": {"data": {"validation_files": [val_id]}}},
                "training_file_id": train_id}
        started = time.perf_counter()
        job = backend.create("/learning/jobs", body, start=True)
        doc, worst_health = backend.wait("/learning/jobs", job)
        wall = time.perf_counter() - started
        if doc["status"] != "succeeded":
            print("job did not succeed:", doc.get("status"), doc.get("error"))
            return 1
        loss = backend.metrics("/learning/jobs", job, "train.loss")
        val = backend.metrics("/learning/jobs", job, "val.loss")
        training = doc.get("training") or {}
        head = sum(v for _, v in loss[:10]) / min(10, len(loss))
        tail = sum(v for _, v in loss[-10:]) / min(10, len(loss))
        drop = 1 - tail / head
        print(f"SFT tiny model, {len(loss)} steps, batch {args.batch_size}")
        print(f"  tokens/s (real tokens):   {training.get('tokens_per_second', 0):>10,.0f}   goal >= 10,000")
        print(f"  tokens/s (padded):        {training.get('padded_tokens_per_second', 0):>10,.0f}")
        start, end = training.get("train_set_loss_start"), training.get("train_set_loss_end")
        print(f"  loss on the training set before -> after: {start:.3f} -> {end:.3f}  drop {1 - end / start:.1%}"
              "   goal >= 50%")
        print(f"  train.loss first 10 -> last 10 steps (batch means): {head:.3f} -> {tail:.3f}  drop {drop:.1%}")
        print(f"  val.loss:                 {' -> '.join(f'{v:.3f}' for _, v in val)}")
        print(f"  training time {training.get('train_seconds')} s on {training.get('threads')} torch thread(s), "
              f"job wall time {wall:.1f} s (includes worker start-up); load average {os.getloadavg()[0]:.1f}")
        print(f"  worker peak RSS {doc.get('worker_peak_rss_mb')} MB; worst /health latency while training "
              f"{worst_health * 1000:.0f} ms")
        print(f"  fine_tuned_model {doc.get('fine_tuned_model')}")

        cancel_body = dict(body, hyperparameters={**body["hyperparameters"], "max_steps": 100000})
        job = backend.create("/learning/jobs", cancel_body, start=True)
        while not backend.metrics("/learning/jobs", job, "train.loss"):
            time.sleep(0.2)
        asked = time.perf_counter()
        backend.http.post(f"/learning/jobs/{job}/cancel").raise_for_status()
        doc, _ = backend.wait("/learning/jobs", job)
        print(f"  cancel -> status {doc['status']} in {time.perf_counter() - asked:.1f} s "
              f"(checkpoint step {doc.get('checkpoint_step')})")
        return 0
    finally:
        backend.close()


if __name__ == "__main__":
    sys.exit(main())
