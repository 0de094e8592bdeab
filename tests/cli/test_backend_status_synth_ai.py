"""``synth-nb backend --status`` says what to paste to run each synth-ai release's own ``synth-ai train``
against the backend (the compat tests paste exactly these lines into a shell)."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from synth_nb.cli.backend import synth_ai_lines


def test_the_lines_to_paste_per_release_family(tmp_path: Path) -> None:
    folder = tmp_path / "my data"  # a blank in the path: the lines must still paste
    folder.mkdir()
    (folder / "api_key").write_text("sk_local_secret_value_1234\n")
    (folder / "task_app_key").write_text("sk_env_local_secret_value_5678\n")
    text = "\n".join(synth_ai_lines("http://127.0.0.1:8123", folder))
    assert "export SYNTH_BACKEND_OVERRIDE=http://127.0.0.1:8123" in text  # 0.2.x
    assert "export BACKEND_BASE_URL=http://127.0.0.1:8123" in text  # 0.3.0 to 0.5.0
    assert "--task-url http://127.0.0.1:8123/task-apps/banking" in text
    assert "--task-url http://127.0.0.1:8123/task-apps/charclass" in text
    assert "mcp<2" in text and "0.4.11" in text and "OPENAI_API_KEY" in text
    assert "secret_value" not in text  # the keys are read from their files when pasted, never shown
    exports = [line.strip() for line in text.splitlines() if line.strip().startswith("export ")]
    script = "\n".join([*exports, 'printf "%s|%s" "$SYNTH_API_KEY" "$ENVIRONMENT_API_KEY"'])
    pasted = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    assert pasted == "sk_local_secret_value_1234|sk_env_local_secret_value_5678"
    assert shlex.quote(str(folder / "api_key")) in text
