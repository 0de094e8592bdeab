"""A backend-chosen job id never becomes a path: refused where it enters, the job cancelled, nothing written.

Driven through the real ``synth-nb`` against the hostile backend, the working folder in a sandbox whose
every file is compared before and after.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest
from hostile_backend import HOSTILE_IDS, HostileBackend, HostileJob, good_job
from hostile_sandbox import Tree, assert_clean, synth_nb
from minimal_configs import MINIMAL_GEPA


@pytest.mark.parametrize("label", sorted(HOSTILE_IDS))
def test_a_created_job_with_a_bad_id_is_cancelled_refused_and_never_written(
        label: str, hostile: HostileBackend, work: Path, tree: Tree) -> None:
    bad = HOSTILE_IDS[label]
    absolute = Path(HOSTILE_IDS["absolute"])
    shutil.rmtree(absolute, ignore_errors=True)  # left by an earlier client that wrote there
    hostile.plan(HostileJob(bad))
    ran = synth_nb(work, "train", "cfg.toml", "--backend", hostile.url, "--yes", "--poll-timeout", "60")
    assert ran.code == 1, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "the backend created a job whose id" in line and "is refused" in line and "cancel" in line
    assert hostile.job(bad).cancels >= 1  # asked to cancel, by its id percent-encoded in the path
    cancels = [unquote(path) for method, path in hostile.state.requests if method == "POST" and path.endswith("/cancel")]
    assert any(bad in path for path in cancels)
    assert tree.changed_outside(work) == []
    assert not absolute.exists()
    registry = work / ".synth_nb" / "jobs.json"
    assert not registry.exists() or bad not in registry.read_text(encoding="utf-8")


def test_a_valid_job_of_the_same_run_is_still_followed_and_bundled(hostile: HostileBackend, work: Path) -> None:
    (work / "other.toml").write_text(MINIMAL_GEPA, encoding="utf-8")
    tree = Tree(work.parents[2])
    good = good_job()
    hostile.plan(HostileJob(HOSTILE_IDS["dotdot-path"]), good)
    ran = synth_nb(work, "train", "cfg.toml", "other.toml", "--backend", hostile.url, "--yes", "--poll-timeout", "60")
    assert ran.code == 1, ran.text  # one submission failed
    assert_clean(ran)
    assert len(ran.error_lines()) == 1
    assert f"submitted prompt_learning job {good.id}" in ran.out and "Final status: succeeded" in ran.out
    assert (work / "results" / good.id / "run.json").is_file()  # its bundle
    assert tree.changed_outside(work) == []


@pytest.mark.parametrize("linked", [HOSTILE_IDS["dotdot-path"], HOSTILE_IDS["escape"], HOSTILE_IDS["long"]],
                         ids=["dotdot-path", "escape", "long"])
def test_a_linked_job_with_a_bad_id_is_not_followed_and_the_job_is(linked: str, hostile: HostileBackend,
                                                                    work: Path, tree: Tree) -> None:
    job = good_job()
    job.status["linked_job_id"] = linked
    hostile.plan(job)
    ran = synth_nb(work, "train", "cfg.toml", "--backend", hostile.url, "--yes", "--poll-timeout", "60")
    assert ran.code == 0, ran.text
    assert_clean(ran)
    assert "could not be followed" in ran.out and "is not a job id" in ran.out
    assert not any(unquote(path).endswith(linked) for _, path in hostile.state.requests)  # never asked for
    assert (work / "results" / job.id / "run.json").is_file()
    assert tree.changed_outside(work) == []


@pytest.mark.parametrize("command", [("attach",), ("train", "--attach"), ("train", "--fork"), ("train", "--rerun"),
                                     ("cancel",), ("train", "--compare")])
@pytest.mark.parametrize("label", ["dotdot-path", "long", "escape", "absolute"])
def test_a_bad_id_on_the_command_line_is_one_line_and_exit_2(command: tuple[str, ...], label: str,
                                                              hostile: HostileBackend, work: Path, tree: Tree) -> None:
    bad = HOSTILE_IDS[label]
    ran = synth_nb(work, *command, bad, "--backend", hostile.url)
    assert ran.code == 2, ran.text
    assert_clean(ran)
    [line] = ran.error_lines()
    assert "is not a job id" in line and len(line) < 300
    assert hostile.state.requests == []  # nothing was asked
    assert tree.changed() == []


def test_a_rerun_answered_with_a_bad_id_is_refused_and_a_fork_stays_beside_its_config(
        hostile: HostileBackend, work: Path) -> None:
    good = good_job()
    hostile.plan(good)
    first = synth_nb(work, "train", "cfg.toml", "--backend", hostile.url, "--yes", "--poll-timeout", "60")
    assert first.code == 0, first.text
    tree = Tree(work.parents[2])
    bad = HOSTILE_IDS["dotdot-path"]
    hostile.plan(HostileJob(bad))
    rerun = synth_nb(work, "train", "--rerun", good.id, "--poll-timeout", "60")
    assert rerun.code == 1, rerun.text
    assert_clean(rerun)
    [line] = rerun.error_lines()
    assert "is refused" in line and hostile.job(bad).cancels >= 1
    assert tree.changed_outside(work) == []
    forked = synth_nb(work, "train", "--fork", good.id)
    assert forked.code == 0, forked.text
    assert_clean(forked)
    assert tree.changed_outside(work) == [f"a/b/project/cfg.fork-{good.id}.toml"]  # the fork, beside its config
