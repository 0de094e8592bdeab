"""``synth-nb backend``: the API key is generated once, saved 0600, printed masked unless asked; Ctrl-C stops."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

#: runs ``synth-nb backend`` alone (without the other sub-commands' imports)
RUN_CLI = ("import argparse, sys; from synth_nb.cli import backend; p = argparse.ArgumentParser(); "
           "backend.configure(p); sys.exit(backend.run(p.parse_args(sys.argv[1:])))")


def test_cli_generates_saves_and_masks_the_key(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    outputs = []
    for extra in ([], ["--print-key"]):
        proc = subprocess.Popen([sys.executable, "-c", RUN_CLI, "--port", "0", "--data-dir", str(data_dir), *extra],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(5)]
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=15)
        assert proc.returncode == 0
        outputs.append("".join(lines) + rest)
    key_file = data_dir / "api_key"
    key = key_file.read_text().strip()
    assert key.startswith("sk_local_") and oct(os.stat(key_file).st_mode & 0o777) == "0o600"
    assert key not in outputs[0] and f"••••{key[-4:]}" in outputs[0] and "(new)" in outputs[0]
    assert key in outputs[1] and "(new)" not in outputs[1]  # reused, shown on request
