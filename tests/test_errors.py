"""Error messages locate the problem and every error maps to a CLI exit code."""

from __future__ import annotations

from synth_nb import errors


def test_config_error_names_file_line_and_key() -> None:
    err = errors.ConfigError("must be a list of integers", path="cfg/gepa.toml", line=12, column=3,
                             key="prompt_learning.gepa.evaluation.seeds", hint="e.g. seeds = [0, 1, 2]")
    text = str(err)
    assert text.startswith("cfg/gepa.toml:12:3 [prompt_learning.gepa.evaluation.seeds]: must be")
    assert "e.g. seeds" in text
    assert err.as_dict()["line"] == 12


def test_config_error_lists_every_problem() -> None:
    subs = [errors.ConfigError("bad a", key="a"), errors.ConfigError("bad b", key="b")]
    text = str(errors.ConfigError("2 problems", path="x.toml", problems=subs))
    assert "[a]: bad a" in text and "[b]: bad b" in text


def test_hierarchy_and_exit_codes() -> None:
    assert issubclass(errors.DatasetError, errors.ConfigError)
    assert issubclass(errors.AuthError, errors.BackendError)
    assert issubclass(errors.BackendError, errors.ClientError)
    assert issubclass(errors.JobTimeoutError, errors.JobError)
    assert errors.ConfigError("x").exit_code == 2
    assert errors.SecretsError("x").exit_code == 2
    assert errors.JobFailedError("x").exit_code == 1
    for name in errors.__all__:
        assert issubclass(getattr(errors, name), errors.SynthNbError)


def test_client_closed_error_names_the_job_and_both_ways_to_re_attach() -> None:
    with_job = str(errors.ClientClosedError(job_id="job_42", base_url="http://h/api"))
    assert "job job_42" in with_job and "http://h/api" in with_job
    assert "`%synth_train --attach job_42` in a notebook" in with_job
    assert "`synth-nb attach job_42` in a terminal" in with_job
    without = str(errors.ClientClosedError())
    assert "%synth_train --attach JOB_ID" in without and "synth-nb attach JOB_ID" in without
    assert issubclass(errors.ClientClosedError, errors.ClientError)
