"""``synth_nb.notebook._frontend``: wizard where a front end renders widgets, text elsewhere."""

from __future__ import annotations

from types import SimpleNamespace

from synth_nb.notebook._frontend import has_widget_frontend

KERNEL_SHELL = SimpleNamespace(kernel=object())


def test_jupyter_server_kernels_have_a_front_end() -> None:
    assert has_widget_frontend(KERNEL_SHELL, {"JPY_SESSION_NAME": "/nb/a.ipynb"})
    assert has_widget_frontend(KERNEL_SHELL, {"VSCODE_PID": "12"})


def test_nbclient_kernels_and_terminals_are_headless() -> None:
    assert not has_widget_frontend(KERNEL_SHELL, {})
    assert not has_widget_frontend(SimpleNamespace(kernel=None), {"JPY_SESSION_NAME": "/nb/a.ipynb"})
    assert not has_widget_frontend(None, {})


def test_environment_variable_overrides_detection() -> None:
    assert has_widget_frontend(None, {"SYNTH_NB_WIDGETS": "1"})
    assert not has_widget_frontend(KERNEL_SHELL, {"JPY_SESSION_NAME": "/nb/a.ipynb", "SYNTH_NB_WIDGETS": "0"})
