"""What making the estimate a job is sent with costs at submission, for every bundled example config.

A submission records, per plan, the estimate from the plan alone (``pipeline.estimate.plan_estimate``: the
config and its files read, no dry run, nothing sent), or the one ``--check`` made of the same plan
(``pipeline.checked_estimates``: one small JSON file read). This prints, per config, the median time of each
over repeated calls (the first call, which pays for imports, apart), beside the median time of the rest of
``record_run`` (masking the config, hashing the datasets), against a backend URL that is not contacted.

Run: ``python benchmarks/submission_estimate.py [--repeat 20]`` (SFT's exact count needs the local extra).
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from synth_nb import pipeline  # noqa: E402
from synth_nb.pipeline.bundle import record_run  # noqa: E402
from synth_nb.pipeline.checked_estimates import checked_estimate  # noqa: E402
from synth_nb.pipeline.estimate import plan_estimate  # noqa: E402
from synth_nb.pipeline.target import Target  # noqa: E402

CONFIGS = ("banking_gepa.toml", "banking_mipro.toml", "sft_tiny.toml", "rl_tiny.toml")


def _timed(call: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(first call, median of the next ``repeat``) in milliseconds."""
    def once() -> float:
        started = time.perf_counter()
        call()
        return (time.perf_counter() - started) * 1000

    first = once()
    return first, statistics.median(once() for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="synth-nb-bench-") as scratch:
        folder = Path(scratch) / "examples"
        shutil.copytree(HERE / "example_notebooks", folder, ignore=shutil.ignore_patterns("*.ipynb", "results"))
        for target, where in ((Target("http://127.0.0.1:9/api"), "a hosted-style URL"),
                              (Target("http://127.0.0.1:9/api", own_key="sk_local_bench"), "the embedded backend")):
            print(f"target: {where} (not contacted)")
            print(f"  {'config':<22}{'plan estimate ms':>18}{'first':>9}{'--check kept ms':>17}{'record_run ms':>15}")
            sources = pipeline.SecretSources(environ={"SYNTH_API_KEY": "sk_bench", "ENVIRONMENT_API_KEY": "env_bench",
                                                      "SYNTH_SKIP_TASK_APP_HEALTH_CHECK": "1"}, cwd=folder)
            for name in CONFIGS:
                item = pipeline.prepare_config(folder / "configs" / name, overrides=pipeline.build_overrides({}, target),
                                               target=target, sources=sources, say=lambda _: None)
                if item.plan is None:
                    print(f"  {name:<22} not prepared: {item.error}")
                    continue
                plan = item.plan
                first, median = _timed(functools.partial(plan_estimate, plan, target), args.repeat)
                _, kept = _timed(functools.partial(checked_estimate, folder, plan), args.repeat)
                _, record = _timed(functools.partial(record_run, item, base=folder), args.repeat)
                print(f"  {name:<22}{median:>18.2f}{first:>9.1f}{kept:>17.2f}{record:>15.2f}")


if __name__ == "__main__":
    main()
