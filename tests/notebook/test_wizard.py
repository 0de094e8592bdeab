"""``synth_nb.notebook.wizard``: state transitions, inline validation, secret handling, submission."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from _fake_job import FakeJob
from _wizard_support import CANARIES, CANARY_ENV, CANARY_PASTED, clean_environ, make_project, tick

from synth_nb.notebook import show
from synth_nb.notebook.wizard import Wizard
from synth_nb.pipeline import actions
from synth_nb.pipeline.request import Request


def synced_state(widget: Wizard) -> str:
    """Everything the front end (and a saved notebook) can ever see of the widget."""
    return json.dumps(widget.get_state(), default=str)


def assert_no_canary(text: str) -> None:
    for canary in CANARIES:
        assert canary not in text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "nb")


@pytest.fixture
def shown(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The jobs the wizard opened monitor panels for (none are drawn)."""
    calls: list[Any] = []
    monkeypatch.setattr(show, "show_jobs", lambda jobs, wait: calls.append(list(jobs)) or [])
    return calls


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, shown: list[Any]) -> list[Any]:
    """Record submissions instead of talking to a backend."""
    calls: list[Any] = []

    async def fake_submit(batch: Any, request: Request, **_: Any) -> list[Any]:
        prepared = batch.prepared
        calls.append(list(prepared))
        jobs = [FakeJob(p.config.flow, job_id=f"job-{len(calls)}-{i}") for i, p in enumerate(prepared)]
        for job in jobs:
            job.watchdog = None  # type: ignore[attr-defined]
        return jobs

    monkeypatch.setattr(actions, "send", fake_submit)
    return calls


async def test_opens_with_nothing_ticked_then_a_ticked_config_shows_masked_keys(project: Path) -> None:
    wizard = Wizard(project, environ=clean_environ())
    assert wizard.step == "configs"
    assert [c["path"] for c in wizard.configs] == ["broken.toml", "gepa.toml", "sft.toml"]
    assert wizard.selected == [] and not wizard.can_submit
    assert wizard.blockers == ["Select at least one config."] and wizard.previews == []
    assert wizard.backend_url == "https://agent-learning.onrender.com/api"  # where jobs go, before any pick
    tick(wizard, "gepa.toml")
    assert wizard.selected == ["gepa.toml"]
    rows = {r["name"]: r for r in wizard.secrets}
    assert rows["ENVIRONMENT_API_KEY"]["found"] and rows["ENVIRONMENT_API_KEY"]["source"] == ".env:.env"
    assert rows["ENVIRONMENT_API_KEY"]["where"] == "found in .env"  # the file's path, in plain words
    assert rows["ENVIRONMENT_API_KEY"]["masked"] == "••••" + CANARY_ENV[-4:]
    assert wizard.can_submit and wizard.blockers == []
    assert '"flow": "prompt_learning"' in wizard.previews[0]["preview"]
    assert_no_canary(synced_state(wizard))


async def test_a_key_set_under_a_misspelt_name_is_named_on_its_missing_row(project: Path) -> None:
    (project / ".env").write_text(f"SYNTH_API_KEY={CANARIES[0]}\n# the task app\nENVIRONMENT_APIKEY={CANARY_ENV}\n")
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    row = next(r for r in wizard.secrets if r["name"] == "ENVIRONMENT_API_KEY")
    assert not row["found"]
    assert row["near"] == "found ENVIRONMENT_APIKEY: did you mean ENVIRONMENT_API_KEY (in .env line 3)?"
    assert_no_canary(synced_state(wizard))


URL_PASSWORD, URL_KEY, KEY_SHAPED = "PW-canary-0b9e", "KEY-canary-5d1f", "sk-canary-MODEL-a8c2e4f6b1d3"


async def test_credentials_in_the_backend_and_overrides_stay_in_the_kernel(project: Path) -> None:
    wizard = Wizard(project, preselect=[project / "gepa.toml", project / "sft.toml"], environ=clean_environ(),
                    backend=f"http://admin:{URL_PASSWORD}@127.0.0.1:9/api",
                    overrides={"task_url": f"http://u:{URL_KEY}@127.0.0.1:8111", "model": KEY_SHAPED})
    state = synced_state(wizard) + wizard.text_summary()
    for canary in (URL_PASSWORD, URL_KEY, KEY_SHAPED, *CANARIES):
        assert canary not in state
    assert wizard.backend == "http://••••@127.0.0.1:9/api"
    assert wizard.overrides["task_url"] == "http://••••@127.0.0.1:8111"
    assert wizard.overrides["model"] == "••••" + KEY_SHAPED[-4:]
    # the kernel checks and uses the values themselves (GEPA takes the task app's URL; SFT checks the model,
    # which a key is not, and says so masked)
    gepa = wizard._prepared[0].plan
    assert gepa is not None and gepa.backend_url == f"http://admin:{URL_PASSWORD}@127.0.0.1:9/api"
    assert URL_KEY in json.dumps(gepa.steps[-1].body)
    assert f"--model '••••{KEY_SHAPED[-4:]}' is not a supported SFT base model" in wizard.override_errors["model"]

    # the front end sends back what its fields show: unchanged, edited around the mask, or new
    wizard.set_state({"backend": "http://••••@127.0.0.1:10/api", "overrides": {**wizard.overrides, "model": "Qwen/Qwen3-4B"}})
    gepa = wizard._prepared[0].plan
    assert gepa is not None and gepa.backend_url == f"http://admin:{URL_PASSWORD}@127.0.0.1:10/api"
    assert URL_KEY in json.dumps(gepa.steps[-1].body) and wizard.overrides["model"] == "Qwen/Qwen3-4B"
    assert "model" not in wizard.override_errors
    wizard.set_state({"backend": "http://127.0.0.1:9/api"})
    assert wizard.backend == "http://127.0.0.1:9/api" and wizard._backend_value() == "http://127.0.0.1:9/api"
    assert not any(c in synced_state(wizard) for c in (URL_PASSWORD, URL_KEY, KEY_SHAPED))


async def test_secret_traits_are_the_only_synced_ones_and_hold_no_values(project: Path) -> None:
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    synced = set(wizard.keys)
    assert "_pasted" not in synced and "jobs" not in synced
    assert_no_canary(repr(wizard.secrets) + wizard.text_summary())


async def test_selecting_an_invalid_config_blocks_submission_with_its_first_error(project: Path, sent: list) -> None:
    wizard = Wizard(project, environ=clean_environ())
    wizard.selected = ["broken.toml"]
    assert not wizard.can_submit
    assert any("broken.toml is invalid" in b and "trainer_mode" in b for b in wizard.blockers)
    wizard.send({"type": "noop"})  # harmless
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert sent == []
    assert wizard.submit_error.startswith("Nothing was sent")


async def test_multi_select_prepares_one_preview_per_config(project: Path) -> None:
    wizard = Wizard(project, environ=clean_environ())
    wizard.selected = ["gepa.toml", "sft.toml"]
    assert [p["path"] for p in wizard.previews] == ["gepa.toml", "sft.toml"]
    assert [p["flow"] for p in wizard.previews] == ["prompt_learning", "sft"]


async def test_wrong_override_type_is_flagged_inline_and_nothing_is_sent(project: Path, sent: list) -> None:
    wizard = Wizard(project, preselect=[project / "sft.toml"], environ=clean_environ())
    assert wizard.overrides["model"] == "Qwen/Qwen3-0.6B"  # prefilled from [job].model
    wizard.overrides = {**wizard.overrides, "examples": "ten"}
    assert "whole number" in wizard.override_errors["examples"]
    assert not wizard.can_submit
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert sent == []
    wizard.overrides = {**wizard.overrides, "examples": "2"}
    assert wizard.override_errors == {} and wizard.can_submit


async def test_one_idempotency_key_for_several_jobs_is_refused(project: Path) -> None:
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    wizard.overrides = {**wizard.overrides, "idempotency": "k-1"}
    assert wizard.can_submit
    wizard.selected = ["gepa.toml", "sft.toml"]
    assert "would be reused by 2 jobs" in wizard.override_errors["idempotency"]
    assert not wizard.can_submit


async def test_changing_an_override_updates_the_preview(project: Path) -> None:
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    assert "http://127.0.0.1:8102" in wizard.previews[0]["preview"]
    wizard.overrides = {**wizard.overrides, "task_url": "http://127.0.0.1:9999"}
    assert "http://127.0.0.1:9999" in wizard.previews[0]["preview"]
    wizard.overrides = {**wizard.overrides, "task_url": "not-a-url"}
    assert "http" in wizard.override_errors["task_url"] and not wizard.can_submit


async def test_a_missing_key_can_be_pasted_and_stays_kernel_side(project: Path, sent: list) -> None:
    (project / ".env").write_text("SYNTH_API_KEY=sk-canary-SYNTH-7f3a9c1e5b2d\n")
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    missing = [r for r in wizard.secrets if not r["found"]]
    assert [r["name"] for r in missing] == ["ENVIRONMENT_API_KEY"]
    assert not wizard.can_submit and any("ENVIRONMENT_API_KEY" in b for b in wizard.blockers)
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert sent == []

    replies: list[Any] = []
    wizard.send = lambda content, buffers=None: replies.append(content)  # type: ignore[method-assign]
    wizard._handle_custom_msg({"type": "paste_secret", "name": "ENVIRONMENT_API_KEY", "value": CANARY_PASTED}, [])
    assert replies == [{"type": "secret_received", "name": "ENVIRONMENT_API_KEY"}]
    row = next(r for r in wizard.secrets if r["name"] == "ENVIRONMENT_API_KEY")
    assert row == {"name": "ENVIRONMENT_API_KEY", "masked": "••••" + CANARY_PASTED[-4:], "source": "pasted",
                   "where": "pasted into the wizard", "found": True, "near": ""}
    assert wizard.can_submit
    assert_no_canary(synced_state(wizard) + wizard.text_summary() + json.dumps(wizard.previews))


async def test_pasting_an_empty_value_forgets_the_key(project: Path) -> None:
    (project / ".env").write_text("SYNTH_API_KEY=sk-canary-SYNTH-7f3a9c1e5b2d\n")
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    wizard._handle_custom_msg({"type": "paste_secret", "name": "ENVIRONMENT_API_KEY", "value": CANARY_PASTED}, [])
    assert wizard.can_submit
    wizard._handle_custom_msg({"type": "paste_secret", "name": "ENVIRONMENT_API_KEY", "value": "  "}, [])
    assert not wizard.can_submit


async def test_choosing_an_env_file_changes_the_source(project: Path) -> None:
    (project / ".env").unlink()
    (project / "team.env").write_text(f"SYNTH_API_KEY=sk-team-0123456789abc\nENVIRONMENT_API_KEY={CANARY_ENV}\n")
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    assert wizard.env_files_available == ["team.env"]
    assert not wizard.can_submit
    wizard.env_file = "team.env"
    rows = {r["name"]: r for r in wizard.secrets}
    assert rows["ENVIRONMENT_API_KEY"]["found"] and "team.env" in rows["ENVIRONMENT_API_KEY"]["source"]
    assert wizard.can_submit
    assert_no_canary(synced_state(wizard))


async def test_a_bad_backend_is_flagged_on_the_backend_field(project: Path, sent: list) -> None:
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    assert wizard.backend_url == "https://agent-learning.onrender.com/api" and not wizard.backend_embedded
    wizard.backend = "ftp://nowhere"
    assert "backend" in wizard.override_errors and not wizard.can_submit
    assert wizard.previews == [] and wizard.backend_url == ""
    assert [b for b in wizard.blockers if b.startswith("Backend (step 1): ")], wizard.blockers
    assert "Fix the highlighted overrides." not in wizard.blockers  # the backend is not an override


async def test_the_backend_decides_which_keys_are_needed(project: Path) -> None:
    (project / ".env").write_text(f"ENVIRONMENT_API_KEY={CANARY_ENV}\n")
    wizard = tick(Wizard(project, backend="http://127.0.0.1:9", environ=clean_environ()), "gepa.toml")
    assert {r["name"]: r["found"] for r in wizard.secrets}["SYNTH_API_KEY"] is False
    wizard.backend = "local"  # the embedded backend brings its own SYNTH_API_KEY
    row = next(r for r in wizard.secrets if r["name"] == "SYNTH_API_KEY")
    assert row["found"] and row["where"].startswith("provided by the embedded local backend")
    assert wizard.backend_embedded and wizard.backend_url.startswith("http://127.0.0.1:")


async def test_typo_keys_are_warnings_in_the_picker_preview_and_text(project: Path) -> None:
    (project / "sft.toml").write_text((project / "sft.toml").read_text() + "\n[hyperparameters]\nn_epoch = 3\n")
    wizard = Wizard(project, preselect=[project / "sft.toml"], environ=clean_environ())
    row = next(c for c in wizard.configs if c["path"] == "sft.toml")
    assert row["valid"] and any("did you mean 'n_epochs'" in w for w in row["warnings"])
    assert next(c for c in wizard.configs if c["path"] == "gepa.toml")["warnings"] == []
    (preview,) = wizard.previews
    assert any("n_epoch" in w and "did you mean 'n_epochs'" in w for w in preview["warnings"])
    assert wizard.can_submit  # a warning does not block
    assert "warning: unknown key hyperparameters.n_epoch" in wizard.text_summary()


async def test_the_preview_names_uploads_and_folds_long_seed_lists(project: Path) -> None:
    seeds = ", ".join(str(i) for i in range(80))
    gepa = (project / "gepa.toml").read_text().replace("train_seeds = [0, 1, 2]", f"train_seeds = [{seeds}]")
    (project / "gepa.toml").write_text(gepa)
    wizard = Wizard(project, environ=clean_environ())
    wizard.selected = ["gepa.toml", "sft.toml"]
    wizard.overrides = {**wizard.overrides, "examples": "2"}
    by_path = {p["path"]: p for p in wizard.previews}
    folded = [line for line in by_path["gepa.toml"]["lines"] if "fold" in line]
    assert folded and {line["fold"] for line in folded} == {"80 seeds: 0…79"}
    assert folded[0]["full"] == json.dumps(list(range(80)))
    assert len(by_path["gepa.toml"]["lines"]) < len(by_path["gepa.toml"]["preview"].splitlines()) - 70
    upload = by_path["sft.toml"]["steps"][0]
    size = (project / "train.jsonl").stat().st_size
    assert (upload["method"], upload["path"], upload["file"], upload["size"], upload["limit"]) == (
        "POST", "/files", "train.jsonl", f"{size} B", 2)


async def test_submit_records_job_ids_and_the_next_preview_diffs_against_it(project: Path, sent: list) -> None:
    handed: list[Any] = []
    wizard = tick(Wizard(project, environ=clean_environ(), on_submitted=handed.append), "gepa.toml")
    assert wizard.previews[0]["has_last"] is False
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    jobs = await wizard.submit_task
    assert [j.id for j in jobs] == ["job-1-0"] and handed == [jobs]
    assert wizard.submitted == [{"job_id": "job-1-0", "flow": "prompt_learning", "path": "gepa.toml"}]
    assert wizard.submitted_to == wizard.backend_url
    assert wizard.step == "submit" and not wizard.submitting
    assert len(sent) == 1
    last = (project / ".synth_nb" / "last_submission.json").read_text()
    assert_no_canary(last)

    wizard.overrides = {**wizard.overrides, "task_url": "http://127.0.0.1:9999"}
    preview = wizard.previews[0]
    assert preview["has_last"]
    assert any(line.startswith("+") and "9999" in line for line in preview["diff"])
    assert any(line.startswith("-") and "8102" in line for line in preview["diff"])


async def test_submit_failure_is_shown_in_the_panel(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from synth_nb.errors import AuthError

    async def refuse(batch: Any, request: Request, **_: Any) -> list[Any]:
        raise AuthError("401 from backend: check SYNTH_API_KEY", status_code=401)

    monkeypatch.setattr(actions, "send", refuse)
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    assert await wizard.submit_task == []
    assert "401" in wizard.submit_error and not wizard.submitting and wizard.submitted == []


async def test_front_end_messages_from_another_thread_are_handled_on_the_kernel_loop(project: Path) -> None:
    wizard = Wizard(project, environ=clean_environ())
    loop_thread = threading.current_thread()
    seen: list[threading.Thread] = []
    original = wizard._recompute

    def spy() -> None:
        seen.append(threading.current_thread())
        original()

    wizard._recompute = spy  # type: ignore[method-assign]
    thread = threading.Thread(target=lambda: setattr(wizard, "selected", ["sft.toml"]), name="subshell")
    thread.start()
    thread.join()
    for _ in range(50):
        if seen:
            break
        await asyncio.sleep(0.01)
    assert seen and all(t is loop_thread for t in seen)
    assert wizard.previews[0]["path"] == "sft.toml"


async def test_rescan_picks_up_new_configs(project: Path) -> None:
    wizard = Wizard(project, environ=clean_environ())
    (project / "sft2.toml").write_text((project / "sft.toml").read_text())
    wizard._handle_custom_msg({"type": "refresh"}, [])
    assert "sft2.toml" in [c["path"] for c in wizard.configs]


async def test_text_fallback_is_masked(project: Path) -> None:
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    data = wizard._repr_mimebundle_()
    bundle = data[0] if isinstance(data, tuple) else data
    assert "gepa.toml" in bundle["text/plain"] and "ENVIRONMENT_API_KEY" in bundle["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert_no_canary(json.dumps(bundle, default=str))


async def test_the_same_payload_again_needs_a_deliberate_second_action(project: Path, sent: list,
                                                                        shown: list) -> None:
    first = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    assert not first.duplicate
    first._handle_custom_msg({"type": "submit"}, [])
    assert first.submit_task is not None
    await first.submit_task
    assert len(sent) == 1 and len(shown) == 1
    # the wizard is over once it submitted; the cell run again opens a new one, which knows the last payloads
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    assert wizard.duplicate
    wizard._handle_custom_msg({"type": "submit"}, [])  # one press: refused
    assert len(sent) == 1
    assert wizard.submit_error.startswith("Nothing was sent: these are the payloads last submitted from this notebook")
    wizard._handle_custom_msg({"type": "submit", "duplicate": True}, [])  # "Submit the same again…", yes
    assert wizard.submit_task is not None
    await wizard.submit_task
    assert len(sent) == 2 and wizard.submit_error == ""
    assert [s["job_id"] for s in wizard.submitted] == ["job-2-0"]
    third = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    third.overrides = {**third.overrides, "task_url": "http://127.0.0.1:9999"}
    assert not third.duplicate  # a changed payload is a new submission, one press
    assert not tick(Wizard(project, environ=clean_environ()), "sft.toml").duplicate  # never sent from here


async def test_panels_of_submitted_jobs_open_in_the_context_of_the_wizards_cell(
        project: Path, sent: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """ipykernel names an output's cell through a context variable; the panels must see the wizard's."""
    import contextvars

    cell: contextvars.ContextVar[str] = contextvars.ContextVar("cell", default="the button press")
    seen: list[str] = []
    monkeypatch.setattr(show, "show_jobs", lambda jobs, wait: seen.append(f"panels: {cell.get()}") or [])
    submit = actions.send

    async def printing_submit(batch: Any, *args: Any, **options: Any) -> list[Any]:
        seen.append(f"checks: {cell.get()}")  # the task-app check lines it prints
        return await submit(batch, *args, **options)

    monkeypatch.setattr(actions, "send", printing_submit)
    wizard = tick(Wizard(project, environ=clean_environ()), "gepa.toml")
    wizard.observe(lambda change: seen.append(f"trait: {cell.get()}"), names=["submitted"])
    token = cell.set("the wizard's cell")
    wizard._cell.capture()  # what _ipython_display_ does while the cell runs
    cell.reset(token)
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    await wizard.submit_task
    assert seen == ["checks: the wizard's cell", "trait: the button press", "panels: the wizard's cell"]
    assert cell.get() == "the button press"


async def test_jobs_submitted_from_the_wizard_are_reported_where_the_magic_asked(
        project: Path, sent: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """``%synth_train --report-to tensorboard`` opening the wizard: its jobs go to the trackers too."""
    from synth_nb import report
    from synth_nb.report import ReportOptions

    reported: list[Any] = []
    monkeypatch.setattr(report, "start", lambda jobs, options: reported.append((jobs, options)))
    options = ReportOptions(("tensorboard",), project / "runs")
    wizard = tick(Wizard(project, environ=clean_environ(), on_submitted=lambda jobs: None,
                         request=Request(project, report=options)), "gepa.toml")
    wizard._handle_custom_msg({"type": "submit"}, [])
    jobs = await wizard.submit_task
    assert reported == [(jobs, options)]


async def test_the_wizard_follows_its_jobs_as_the_magics_flags_say(project: Path, sent: list, shown: list,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """``%synth_train --record PATH --poll-interval 2`` opening the wizard: its jobs are recorded and polled as
    the ``--yes`` path would; with ``--no-poll`` nothing follows them (no panel, no recording)."""
    from synth_nb.pipeline import follow as pipeline_follow

    recorded: list[Any] = []
    monkeypatch.setattr(pipeline_follow, "start_recording",
                        lambda jobs, base, secrets: recorded.append(([j.id for j in jobs], base)) or [])
    options: list[dict[str, Any]] = []
    send = actions.send

    async def sending(batch: Any, request: Request, **given: Any) -> list[Any]:
        options.append({"poll_interval": request.poll_interval, "limits": request.following.limits})
        return await send(batch, request, **given)

    monkeypatch.setattr(actions, "send", sending)
    record = project / "stream.jsonl"
    request = Request(project, record=record, poll_interval=2.0, limits={"max_minutes": 5.0})
    wizard = tick(Wizard(project, environ=clean_environ(), request=request), "gepa.toml")
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    await wizard.submit_task
    assert recorded == [(["job-1-0"], record)] and len(shown) == 1
    assert options == [{"poll_interval": 2.0, "limits": {"max_minutes": 5.0}}]

    quiet = Request(project, record=record, poll=False, limits={"max_minutes": 5.0})
    wizard = tick(Wizard(project, environ=clean_environ(), request=quiet), "sft.toml")
    wizard._handle_custom_msg({"type": "submit"}, [])
    assert wizard.submit_task is not None
    await wizard.submit_task
    assert len(sent) == 2 and len(recorded) == 1 and len(shown) == 1  # sent, then left alone
    assert options[1] == {"poll_interval": 5.0, "limits": None}  # no watchdog: nothing follows the job
