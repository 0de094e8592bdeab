"""The backend's text never becomes terminal control: every path that prints it (line mode, ``--stream-format
chart``, ``attach``, ``jobs``, ``--compare``, the final block, errors) shows control sequences escaped, and
``--json`` stays valid JSON."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pexpect
import pytest
from hostile_backend import HOSTILE_TEXT, HostileBackend, control_text_job, good_job
from hostile_sandbox import COMMAND_SECONDS, RAW_CONTROL, Tree, assert_clean, environment, synth_nb

from synth_nb.job import JobRecord, JobRegistry

#: how ``HOSTILE_TEXT`` starts once made inert
ESCAPED = "\\x1b]0;pwned-title\\x07\\x1b]52;c;"


def test_train_in_line_mode_prints_every_backend_string_escaped(hostile: HostileBackend, work: Path,
                                                                tree: Tree) -> None:
    job = control_text_job()
    hostile.plan(job)
    ran = synth_nb(work, "train", "cfg.toml", "--backend", hostile.url, "--yes", "--poll-timeout", "60",
                   "--stream-format", "cli")  # a line per update, though not on a terminal
    assert ran.code == 1, ran.text  # the job failed: exit 1 as documented
    assert_clean(ran)
    assert ESCAPED in ran.out
    assert "hello \\x1b]0;pwned-title" in ran.out and "Error details: detail \\x1b" in ran.out  # event, error
    assert "multi\\nline\\r" in ran.out  # a line break inside one value does not start a line of its own
    final = ran.out[ran.out.index("Final status: failed"):]
    assert "gepa.best_score\\x1b" in final  # its metric (the status came first: in the final block, not a line)
    assert "error: failed \\x1b]0;" in final and "\\u202edesrever" in final and "\\u009b31m" in final
    assert tree.changed_outside(work) == []


def test_attach_prints_the_history_and_the_final_block_escaped(hostile: HostileBackend, work: Path) -> None:
    job = hostile.add(control_text_job())
    ran = synth_nb(work, "attach", job.id, "--backend", hostile.url, "--flow", "prompt_learning")
    assert ran.code == 1, ran.text
    assert_clean(ran)
    assert f"attached to prompt_learning job {job.id}" in ran.out and ESCAPED in ran.out
    assert "Final status: failed" in ran.out


def test_jobs_lists_a_hostile_status_escaped_and_its_json_stays_json(hostile: HostileBackend, work: Path) -> None:
    job = hostile.add(good_job())
    job.status = {"status": f"running{HOSTILE_TEXT}"}
    JobRegistry(work).record(JobRecord(job.id, "prompt_learning", f"{hostile.url}/api"))
    listed = synth_nb(work, "jobs")
    assert listed.code == 0, listed.text
    assert_clean(listed)
    assert f"running{ESCAPED}".lower() in listed.out
    as_json = synth_nb(work, "jobs", "--json")
    assert as_json.code == 0 and not RAW_CONTROL.search(as_json.out)
    [record] = json.loads(as_json.out)
    assert record["status"] == f"running{HOSTILE_TEXT}".lower()  # the value itself, escaped only as JSON


def test_compare_prints_its_table_escaped(hostile: HostileBackend, work: Path) -> None:
    job = hostile.add(control_text_job())
    JobRegistry(work).record(JobRecord(job.id, "prompt_learning", f"{hostile.url}/api", status="failed"))
    ran = synth_nb(work, "train", "--compare", job.id)
    assert ran.code == 0, ran.text
    assert_clean(ran)
    assert job.id in ran.out


def test_the_live_chart_shows_the_backends_text_escaped(hostile: HostileBackend, work: Path) -> None:
    job = control_text_job()
    hostile.plan(job)
    env = {**environment(), "TERM": "xterm", "COLUMNS": "140", "LINES": "40", "PYTHONUNBUFFERED": "1"}
    env.pop("PYTHONIOENCODING", None)
    child = pexpect.spawn(sys.executable, ["-m", "synth_nb", "train", "cfg.toml", "--backend", hostile.url, "--yes",
                                           "--stream-format", "chart", "--poll-timeout", "60"],
                          cwd=str(work), env=env, encoding="utf-8", codec_errors="replace", dimensions=(40, 140),
                          timeout=COMMAND_SECONDS)
    child.logfile_read = screen = io.StringIO()
    try:
        child.expect("Final status: failed")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    everything = screen.getvalue()
    assert child.exitstatus == 1
    # the terminal's own drawing uses CSI; none of the backend's sequences arrive as they were sent
    for raw in ("\x1b]0;pwned", "\x1b]52;", "\x1b]8;;http://evil", "\x1bP+q", "\x9b31m", "\u202e",
                "\x1b[2KFinal status: succeeded", "\x1b[2J"):
        assert raw not in everything, repr(raw)
    assert "Traceback" not in everything
    assert "\\x1b]0;pwned-title" in everything  # shown, escaped


@pytest.mark.parametrize("command", ["attach", "cancel"])
def test_an_error_answer_is_one_line_with_the_backends_words_escaped(command: str, hostile: HostileBackend,
                                                                     work: Path) -> None:
    """``attach`` (httpx) and ``cancel`` (the standard library's HTTP client) say it alike."""
    job = hostile.add(good_job())
    job.status_code, job.status = 403, {"detail": f"denied\n{HOSTILE_TEXT}"}
    ran = synth_nb(work, command, job.id, "--backend", hostile.url, "--flow", "prompt_learning")
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "HTTP 403: denied\\n\\x1b]0;pwned-title" in line
