"""The final block in a real terminal, at least as rich as synth-ai 0.2.24's: why the job stopped, each figure it
used beside the estimate it was sent with and their ratio, the gain over the baseline on named seeds, an
ASCII curve of the headline series, then where its files are; ``run.json`` keeps the same.

A GEPA job on a real backend: first sent as is (its estimate is the plan's own), then ``--check`` and the same
plan sent again (its estimate is the one ``--check`` made, tokens and time included).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pexpect
from minimal_configs import LOCAL_GEPA

CLI = [sys.executable, "-m", "synth_nb"]
WAIT = 240  # generous: the machine may be loaded


def _run(folder: Path, env: dict[str, str], args: list[str], children: list[pexpect.spawn]) -> str:
    child = pexpect.spawn(CLI[0], [*CLI[1:], *args], cwd=str(folder), env=env, encoding="utf-8",
                          dimensions=(50, 160), timeout=WAIT)
    children.append(child)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 0, out
    return out.replace("\r\n", "\n")


def _block(out: str) -> str:
    return out[out.index("Final status: "):]


def _row(block: str, label: str) -> str:
    return next(line for line in block.splitlines() if line.startswith(f"  {label}:")).split(":", 1)[1].strip()


def test_the_final_block_says_why_it_stopped_what_it_used_beside_its_estimate_the_gain_and_a_curve(
        folder: Path, backend: Any, task_app: Any, children: list[pexpect.spawn]) -> None:
    (folder / "pl.toml").write_text(LOCAL_GEPA.format(task_url=task_app.url, budget=60))
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL")}
    env.update(SYNTH_API_KEY=backend.api_key, TERM="xterm", COLUMNS="160", LINES="50", PYTHONUNBUFFERED="1")
    out = _run(folder, env, ["train", "pl.toml", "--backend", backend.url, "--yes"], children)
    block = _block(out)
    job_id = re.search(r"submitted prompt_learning job (pl_\w+)", out).group(1)  # type: ignore[union-attr]

    stopped = _row(block, "stopped")
    assert re.fullmatch(r"succeeded: the search used its rollout budget \(budget_exhausted: \d+ of 60 rollouts\)",
                        stopped), block
    assert _row(block, "estimate").startswith("from the plan (no dry run at submission"), block
    rollouts = re.fullmatch(r"([\d,]+) \((\d+) search \+ (\d+) held-out\) · estimate ([\d,]+) · ×(\d\.\d\d)",
                            _row(block, "rollouts"))
    assert rollouts is not None, block
    used, estimated = int(rollouts.group(1).replace(",", "")), int(rollouts.group(4).replace(",", ""))
    assert estimated == 60 + 16 * 2 and rollouts.group(5) == f"{used / estimated:.2f}"
    assert _row(block, "tokens").endswith("· not estimated: sized by a dry rollout, which --check runs "
                                          "(nothing is sent at submission)"), block
    assert re.fullmatch(r"(\d\.\d s|\d+ s|< 0\.1 s) · not estimated: timed by a dry run, which --check runs",
                        _row(block, "time")), block
    # a backend given by URL is not the embedded one: the cost is what the catalogue prices, here nothing
    assert _row(block, "cost") == ("$0.0000 · not estimated: unknown (the model catalogue has no price for "
                                   "gpt-4.1-mini)"), block
    assert re.fullmatch(r"held-out score \d\.\d{4} → \d\.\d{4}: [+-]\d\.\d{4}(, [+-][\d.]+%)?( better| worse)? on 16 "
                        r"held-out seeds \(test split\)", _row(block, "gain")), block
    curve = block[block.index("  curve:"):block.index("  summary:")].splitlines()
    assert curve[0] == "  curve:    best so far (score (share correct)), by rollouts used", block
    plot, axis = curve[1:-2], curve[-2:]
    assert len(plot) in (6, 1) and "*" in plot[0] and "*" in plot[-1], block  # six rows, one when it is flat
    assert re.fullmatch(r" +\+-{48}", axis[0]) and re.fullmatch(r" +4 +60", axis[1]), block
    assert block.index("  summary:") < block.index("  bundle:")  # then where the files are

    run = json.loads((folder / "results" / job_id / "run.json").read_text())
    assert run["stop_reason"] == {"kind": "budget_exhausted", "text": stopped, "finish_reason": "budget_exhausted",
                                  "figure": stopped.split("budget_exhausted: ", 1)[1].rstrip(")")}
    figures = {f["figure"]: f for f in run["estimate_vs_actual"]}
    assert figures["rollouts"]["actual"] == used and figures["rollouts"]["estimate"] == estimated
    assert figures["rollouts"]["ratio"] == round(used / estimated, 4) and figures["tokens"]["estimate"] is None
    assert run["estimate"]["basis"].startswith("the plan")

    # --check, then the same plan again: the estimate it is sent with is the one --check made
    _run(folder, env, ["train", "pl.toml", "--backend", backend.url, "--check"], children)
    block = _block(_run(folder, env, ["train", "pl.toml", "--backend", backend.url, "--yes"], children))
    assert re.match(r"from --check at \d\d:\d\d \(the config, one dry rollout, one dry proposal and the whole search "
                    r"run once\)", _row(block, "estimate")), block
    assert re.fullmatch(r"[\d,]+ \(policy [\d,]+, proposer 0\) · estimate [\d,]+ · ×\d+\.\d\d", _row(block, "tokens"))
    # the wall time --check estimated on this machine (not a floor), beside the time the job took
    assert re.search(r" · estimate [\d.]+ s · ×\d+\.\d\d$", _row(block, "time")), block
