"""JobRegistry: .synth_nb/jobs.json, atomic writes, newest first."""

from __future__ import annotations

from pathlib import Path

import pytest

from synth_nb.errors import ConfigError
from synth_nb.job import JobRecord, JobRegistry
from synth_nb.job.registry import config_hash


def test_record_update_get_list(tmp_path: Path) -> None:
    registry = JobRegistry(tmp_path)
    registry.record(JobRecord("job_a", "sft", "http://h/api", submitted_at="2026-01-01T00:00:00+00:00"))
    registry.record(JobRecord("job_b", "rl", "http://h/api", submitted_at="2026-01-02T00:00:00+00:00"))
    registry.update("job_a", last_seq=42, status="succeeded")
    assert registry.path == tmp_path / ".synth_nb" / "jobs.json"
    assert [r.job_id for r in registry.list()] == ["job_b", "job_a"]
    found = registry.get("job_a")
    assert found is not None and found.last_seq == 42 and found.status == "succeeded"
    assert registry.get("job_missing") is None
    assert not list(registry.path.parent.glob("*.tmp"))


def test_corrupt_registry_is_a_config_error_naming_the_file(tmp_path: Path) -> None:
    registry = JobRegistry(tmp_path)
    registry.path.parent.mkdir()
    registry.path.write_text("{not json")
    with pytest.raises(ConfigError, match="jobs.json"):
        registry.list()


def test_config_hash_depends_on_content(tmp_path: Path) -> None:
    config = tmp_path / "a.toml"
    config.write_text("x = 1\n")
    first = config_hash(config)
    config.write_text("x = 2\n")
    assert config_hash(config) != first
    assert config_hash(None, "plan") == config_hash(tmp_path / "missing.toml", "plan")
