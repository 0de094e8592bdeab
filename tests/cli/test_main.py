"""``synth-nb`` entry point: duration flags checked in the CLI and the magic alike, a closed output pipe."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from minimal_configs import MINIMAL_GEPA

from synth_nb.cli.main import COMMANDS, EXIT_OUTPUT_CLOSED, build_parser, invoked_command, main
from synth_nb.errors import ConfigError
from synth_nb.pipeline.request import Request

BAD_SECONDS = ["-1", "-5", "0", "nan", "inf", "-inf", "soon"]


@pytest.mark.parametrize("flag", ["--poll-interval", "--poll-timeout"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_the_cli_refuses_durations_that_would_busy_poll_or_end_at_once(
        flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--dry-run", f"{flag}={value}"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}:" in err and "Traceback" not in err


@pytest.mark.parametrize("flag", ["--poll-interval", "--poll-timeout"])
@pytest.mark.parametrize("value", BAD_SECONDS)
def test_the_magic_refuses_them_too(flag: str, value: str) -> None:
    from IPython.core import magic_arguments
    from IPython.core.error import UsageError

    from synth_nb.notebook.magics import SynthMagics

    with pytest.raises(UsageError, match=flag):
        magic_arguments.parse_argstring(SynthMagics.synth_train, f"{flag}={value}")
    args = magic_arguments.parse_argstring(SynthMagics.synth_train, f"{flag}=2.5")
    assert getattr(args, flag[2:].replace("-", "_")) == 2.5


@pytest.mark.parametrize("field", ["poll_interval", "poll_timeout"])
@pytest.mark.parametrize("value", [-1.0, 0.0, float("nan"), float("inf")])
def test_follow_options_refuse_them_for_library_callers(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match="--poll-"):
        Request(Path("."), **{field: value})  # type: ignore[arg-type]


def test_a_closed_output_pipe_exits_141_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "cfg.toml").write_text(MINIMAL_GEPA)
    env = {**os.environ, "SYNTH_API_KEY": "sk_synth_pipe_0123456789abcdef", "ENVIRONMENT_API_KEY": "sk_env_pipe_0123"}
    env.pop("SYNTH_BACKEND_OVERRIDE", None)
    for argv in (["--dry-run", "--json"], ["--dry-run"]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before anything is written, as with `| true`
        proc = subprocess.run([sys.executable, "-m", "synth_nb", "train", "--config", "cfg.toml", *argv],
                              stdout=write, stderr=subprocess.PIPE, cwd=tmp_path, env=env, text=True, timeout=120)
        os.close(write)
        assert proc.returncode == EXIT_OUTPUT_CLOSED, proc.stderr
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def test_the_top_level_help_lists_every_command_without_importing_one() -> None:
    """``synth-nb --help`` is drawn from the command table alone: every command with its one-line help, and no
    command module imported (a fresh process; the commands' own help is checked below)."""
    code = ("import json, sys\nfrom synth_nb.cli.main import COMMANDS, main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(m for _, (m, _h) in COMMANDS.items() if m in sys.modules)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    listed = " ".join(proc.stdout.split())  # argparse wraps long help lines
    for name, (_, help_text) in COMMANDS.items():
        assert name in proc.stdout
        assert " ".join(help_text.split()) in listed


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_still_has_its_whole_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: synth-nb {name}") and COMMANDS[name][1].split()[0] in out
    full = build_parser()  # every command configured: the same flags as when the command alone is
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    assert sub.choices[name].format_help() == out


def test_only_the_invoked_command_is_configured() -> None:
    assert invoked_command(["jobs", "--json"]) == "jobs"
    assert invoked_command(["--help"]) is None and invoked_command([]) is None and invoked_command(["nope"]) is None


def test_cancel_parses_its_flags_without_importing_a_flow_the_client_or_the_actions() -> None:
    """``synth-nb cancel --help`` (and a refused JOB_ID) needs the command's flags only: no flow module, no client,
    no action sequence, no pydantic; its ``--flow`` still lists every built-in flow."""
    heavy = ("synth_nb.flows.base", "synth_nb.flows.prompt_learning", "synth_nb.flows.rl", "synth_nb.flows.sft",
             "synth_nb.client", "synth_nb.pipeline.actions", "synth_nb.cli.follow", "synth_nb.cli.attach", "pydantic")
    code = ("import json, sys\nfrom synth_nb.cli.main import main\n"
            "try:\n    main(['cancel', '--help'])\nexcept SystemExit:\n    pass\n"
            f"print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert "--flow {prompt_learning,rl,sft}" in proc.stdout


def test_cancel_of_a_job_imports_no_httpx_asyncio_pydantic_or_flow(backend: Any, tmp_path: Path) -> None:
    """``synth-nb cancel JOB_ID`` against a real backend: found by a status read, cancelled and confirmed, with the
    standard library's HTTP client (``PlainClient``) and each flow's ``jobs`` data: no httpx, asyncio, stamina,
    pydantic, flow module, action sequence or ``.env`` parser is imported (``benchmarks/cli_start.py``)."""
    with httpx.Client(base_url=backend.api_url, headers={"Authorization": f"Bearer {backend.api_key}"},
                      trust_env=False, timeout=60) as http:  # a queued job (created, never started)
        job_id = http.post("/learning/jobs", json={"metadata": {"local_executor": "replay", "recording": "sft"}}
                           ).json()["id"]
    heavy = ("httpx", "asyncio", "stamina", "pydantic", "dotenv", "synth_nb.flows.base",
             "synth_nb.flows.prompt_learning.flow", "synth_nb.flows.rl.flow", "synth_nb.flows.sft.flow",
             "synth_nb.client._client", "synth_nb.records", "synth_nb.pipeline.actions", "synth_nb.pipeline.request",
             "synth_nb.pipeline.prepare", "synth_nb.secrets._bundle")
    code = ("import json, sys\nfrom synth_nb.cli.main import main\n"
            f"code = main(['cancel', {job_id!r}, '--backend', {backend.url!r}])\n"
            f"print(json.dumps([code, sorted(m for m in {heavy!r} if m in sys.modules)]), file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k not in ("SYNTH_BACKEND_OVERRIDE", "HTTP_PROXY", "HTTPS_PROXY",
                                                            "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env=env | {"SYNTH_API_KEY": backend.api_key, "SYNTH_NB_BACKEND_DIR": str(tmp_path / "none")},
                          check=True)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == [0, []]
    assert proc.stdout.strip() == f"job {job_id}: cancelled"
    assert backend.api_key not in proc.stdout + proc.stderr
@pytest.mark.parametrize(("words", "starts"), [
    (["-c", "x.toml", "--backend", "local"], True),
    (["--backend=local", "--yes"], True),
    (["--dry-run", "--backend", "local"], True),  # a dry run plans against the embedded backend too
    (["--backend", "http://127.0.0.1:8000"], False),
    (["--backend", "local", "--help"], False),
    (["--backend", "local", "-h"], False),
    (["--backend", "local", "--attach", "pl_1"], False),  # attach and jobs use a backend that runs
    (["--backend", "local", "--att=pl_1"], False),  # argparse takes a flag's prefix
    (["--jobs", "--backend", "local"], False),
    (["--compare", "a", "b", "--backend", "local"], False),
    (["-c", "local"], False),
])
def test_only_a_command_that_will_ask_for_the_embedded_backend_starts_it_early(words: list[str],
                                                                                starts: bool) -> None:
    from synth_nb.cli.head_start import _asks_for_local

    assert _asks_for_local(words) is starts


def test_a_usage_error_leaves_no_backend_started_early_running(tmp_path: Path) -> None:
    from synth_nb.local.backend_info import INFO_FILE
    from synth_nb.local.shared import find_backend

    data = tmp_path / "backend"
    env = {**os.environ, "SYNTH_NB_BACKEND_DIR": str(data)}
    done = subprocess.run([sys.executable, "-m", "synth_nb", "train", "--backend", "local", "--no-such-flag"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "--no-such-flag" in done.stderr and "Traceback" not in done.stderr
    assert (data / "backend.log").exists()  # it was started beside the command's own start-up
    assert find_backend(data) is None and not (data / INFO_FILE).exists()
