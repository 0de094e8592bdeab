"""Headless runs are quiet and useful: ``jupyter nbconvert --execute`` and ``papermill`` (no front end) run
an example notebook each, in ``test_example_notebooks`` (the SFT and the GEPA example, whose saved notebooks
are held there to every check of an example run; every other example is run headless by nbclient, the
executor both use), and the saved notebook's text output of the job (its cell's stream text and each
output's text copy) stays under 100 lines: no button row, a progress line at most each tenth of the work
or every 30 s, a final block, the summary's text copy cut short; papermill's log says the same as it runs.
Here, a replayed 10,000-step job shows the rule at work: a line per tenth, not per update."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_example_notebooks import _execute, _recording, check_progress, replay_panel_cell

pytestmark = pytest.mark.notebook


def test_a_headless_panel_prints_a_line_per_tenth_of_the_work_not_per_update(tmp_path: Path) -> None:
    rec = _recording(tmp_path / "sft10k.jsonl", 10_000, 8.0)
    cell = replay_panel_cell(rec) + """
status = await panel
print(status, len(job.metrics), panel.headless)
await client.aclose()
backend.stop()
"""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    _execute(nb, tmp_path, tmp_path / "out", timeout=300)
    said = "".join(str(o.get("text", "")) for o in nb.cells[0].outputs if o.get("output_type") == "stream")
    assert "succeeded 10000 True" in said
    lines = check_progress(said)
    assert 2 <= len(lines) <= 12, said  # 10,000 metric points and 100 progress events: about one line a tenth
    assert all(m.group(4) == "steps" for m in lines if m.group(4))
    assert said.count("Final status: succeeded · 10000/10000 steps · finished") == 1
    assert not [o for o in nb.cells[0].outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
