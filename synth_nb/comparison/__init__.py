"""Compare runs of any flow: overlaid curves on a common progress axis, final metrics, config differences.

``synth_nb.compare([job_or_id, ...])`` (also ``%synth_train --compare ID ID …`` and
``synth-nb train --compare``) returns a ``Comparison``.
"""

from synth_nb.comparison.compare import Comparison, compare, compare_request
from synth_nb.comparison.curves import AXES, Axis, Curve
from synth_nb.comparison.runs import Run

__all__ = ["AXES", "Axis", "Comparison", "Curve", "Run", "compare", "compare_request"]
