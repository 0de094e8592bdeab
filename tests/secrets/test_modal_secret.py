"""Modal secrets through the ``modal`` client, tested with a stand-in executable on PATH."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from synth_nb.errors import SecretsError
from synth_nb.secrets import resolve_secrets
from synth_nb.secrets._modal import read_modal_secret

STAND_IN = """#!/bin/sh
# stand-in for the modal CLI: `modal shell --secret NAME --cmd "env -0"`
if [ "$1" = "shell" ] && [ "$2" = "--secret" ] && [ "$3" = "team-keys" ]; then
  printf 'PATH=/usr/bin\\0SYNTH_API_KEY=sk_modal_synth_CANARY_1111\\0ENVIRONMENT_API_KEY=sk_modal_env_CANARY_2222\\0'
  exit 0
fi
echo "Secret '$3' not found" >&2
exit 1
"""


@pytest.fixture()
def modal_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "modal"
    exe.write_text(STAND_IN)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return exe


def test_reads_known_keys_from_the_secret(modal_on_path: Path) -> None:
    values = read_modal_secret("team-keys", ["SYNTH_API_KEY", "ENVIRONMENT_API_KEY"])
    assert values == {"SYNTH_API_KEY": "sk_modal_synth_CANARY_1111", "ENVIRONMENT_API_KEY": "sk_modal_env_CANARY_2222"}


def test_resolve_records_modal_as_source(modal_on_path: Path, tmp_path: Path) -> None:
    bundle = resolve_secrets(modal_secrets=["team-keys"], environ={}, cwd=tmp_path)
    assert bundle.missing(["SYNTH_API_KEY", "ENVIRONMENT_API_KEY"]) == []
    assert bundle.get("SYNTH_API_KEY").source == "modal:team-keys"  # type: ignore[union-attr]
    assert "CANARY" not in repr(bundle)


def test_unknown_secret_gives_actionable_error(modal_on_path: Path) -> None:
    with pytest.raises(SecretsError, match="modal secret list"):
        read_modal_secret("nope", ["SYNTH_API_KEY"])


def test_modal_not_installed_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SecretsError, match="'modal' command is not installed"):
        read_modal_secret("team-keys", ["SYNTH_API_KEY"])
