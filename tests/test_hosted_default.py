"""One hosted default, said the same everywhere: the code's default backend is the one the README and the
example notebooks name, and no other hosted URL is offered as the default."""

from __future__ import annotations

from pathlib import Path

from synth_nb.backend import DEFAULT_BACKEND

REPO = Path(__file__).resolve().parents[1]


def test_the_examples_and_the_readme_name_the_codes_hosted_default() -> None:
    texts = {p.relative_to(REPO).as_posix(): p.read_text(encoding="utf-8")
             for p in [REPO / "README.md", *sorted((REPO / "example_notebooks").glob("*.ipynb"))]}
    assert all("usesynth.ai" not in text for text in texts.values()), [n for n, t in texts.items() if "usesynth.ai" in t]
    naming = [name for name, text in texts.items() if DEFAULT_BACKEND.removeprefix("https://") in text]
    assert len(naming) >= 4, naming  # each example notebook says where its jobs go without --backend local
