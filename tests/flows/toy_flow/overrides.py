"""The toy flow's own override: how many rounds to play, replacing ``[toy].rounds``."""

from __future__ import annotations

from synth_nb.flows.override_rows import OverrideRow

ROWS = (
    OverrideRow("rounds", "--rounds", "int", "Toy: rounds to play (replaces [toy].rounds).", "Rounds",
                "How many rounds", metavar="N", keys=(("toy", "rounds"),)),
)
