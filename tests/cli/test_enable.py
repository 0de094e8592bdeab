"""``synth-nb enable``: the IPython kernel config block, and a real kernel that loads the extension."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synth_nb.cli import enable as enable_command
from synth_nb.notebook.kernel_profile import BEGIN, disable, enable, kernel_config_path


def main(argv: list[str]) -> int:
    """``synth-nb enable ...`` through the sub-command's own parser."""
    import argparse

    parser = argparse.ArgumentParser(prog="synth-nb enable")
    enable_command.configure(parser)
    return enable_command.run(parser.parse_args(argv[1:]))


def test_enable_appends_one_block_and_keeps_user_settings(tmp_path: Path) -> None:
    path = kernel_config_path("default", tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("c = get_config()\nc.IPKernelApp.matplotlib = 'inline'\n")
    assert enable(path) is True
    assert enable(path) is False
    text = path.read_text()
    assert text.count(BEGIN) == 1
    assert text.startswith("c = get_config()\nc.IPKernelApp.matplotlib = 'inline'\n\n")
    assert 'c.InteractiveShellApp.extensions.append("synth_nb")' in text
    assert disable(path) is True
    assert path.read_text() == "c = get_config()\nc.IPKernelApp.matplotlib = 'inline'\n"
    assert disable(path) is False


def test_cli_enable_and_disable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["enable", "--ipython-dir", str(tmp_path), "--profile", "work"]) == 0
    path = tmp_path / "profile_work" / "ipython_kernel_config.py"
    assert BEGIN in path.read_text()
    assert "enabled synth-nb in" in capsys.readouterr().out
    assert main(["enable", "--ipython-dir", str(tmp_path), "--profile", "work", "--disable"]) == 0
    assert path.read_text() == ""


@pytest.mark.notebook
def test_a_new_kernel_has_the_magic_after_enable(tmp_path: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    enable(kernel_config_path("default", tmp_path / "ipython"))
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")}
    km, kc = start_new_kernel(env=env, cwd=str(tmp_path))
    try:
        texts: list[str] = []
        kc.execute_interactive("print('MAGIC', get_ipython().find_line_magic('synth_train') is not None)",
                               output_hook=lambda m: texts.append(m["content"].get("text", "")), timeout=60)
        assert "MAGIC True" in "".join(texts)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
