"""A live panel leaves the kernel's older objects out of the collector's passes only while its job streams."""

from __future__ import annotations

import gc

from synth_nb.notebook import collector_pause


def test_objects_are_frozen_while_a_panel_streams_and_returned_after_the_last() -> None:
    assert gc.get_freeze_count() == 0
    collector_pause.hold()
    collector_pause.hold()  # a second panel
    assert gc.get_freeze_count() > 0
    collector_pause.release()
    assert gc.get_freeze_count() > 0  # the first still streams
    collector_pause.release()
    assert gc.get_freeze_count() == 0


def test_a_freeze_made_by_someone_else_is_left_alone() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        collector_pause.hold()
        collector_pause.release()
        # still frozen (an unfreeze would empty it); frozen objects freed meanwhile leave the count, so it
        # may be a little lower than before
        assert frozen // 2 < gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
