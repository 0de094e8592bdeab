"""``synth_nb.notebook.folder`` and ``synth_nb.pipeline.request``: notebook folder, request paths, where the
secrets come from."""

from __future__ import annotations

from pathlib import Path

from synth_nb.notebook.folder import notebook_folder
from synth_nb.pipeline.flags import build_train_parser
from synth_nb.pipeline.request import Request


def test_notebook_folder_prefers_the_session_notebook(tmp_path: Path) -> None:
    nb_dir = tmp_path / "project"
    nb_dir.mkdir()
    nb = nb_dir / "train.ipynb"
    assert notebook_folder({"__session__": str(nb)}, {}, cwd=tmp_path) == nb_dir.resolve()
    assert notebook_folder({}, {"JPY_SESSION_NAME": str(nb)}, cwd=tmp_path) == nb_dir.resolve()
    assert notebook_folder({}, {"JPY_SESSION_NAME": "project/train.ipynb"}, cwd=tmp_path) == nb_dir.resolve()


def test_notebook_folder_falls_back_to_the_kernel_cwd(tmp_path: Path) -> None:
    assert notebook_folder({}, {}, cwd=tmp_path) == tmp_path.resolve()
    gone = tmp_path / "deleted" / "x.ipynb"
    assert notebook_folder({"__session__": str(gone)}, {}, cwd=tmp_path) == tmp_path.resolve()
    assert notebook_folder({"__session__": "vscode-notebook://x"}, {}, cwd=tmp_path) == tmp_path.resolve()


def test_train_request_resolves_paths_against_the_notebook_folder(tmp_path: Path) -> None:
    args = build_train_parser().parse_args(
        ["-c", "a.toml", "--config", "/abs/b.toml", "--env-file", "keys.env", "--dataset", "data/train.jsonl",
         "--examples", "3", "--backend", "local", "--yes", "--record", "run.jsonl", "--modal-secret", "team"])
    request = Request.from_args(args, tmp_path)
    assert request.configs == [tmp_path / "a.toml", Path("/abs/b.toml")]
    assert request.env_files == [tmp_path / "keys.env"]
    assert request.overrides == {"dataset": str(tmp_path / "data" / "train.jsonl"), "examples": 3}
    assert request.backend == "local" and request.yes and not request.wait
    assert request.record == tmp_path / "run.jsonl"
    sources = request.sources(environ={"SYNTH_API_KEY": "x"})
    assert sources.env_files == (tmp_path / "keys.env",) and sources.modal_secrets == ("team",)
    assert sources.cwd == tmp_path and sources.environ == {"SYNTH_API_KEY": "x"}
