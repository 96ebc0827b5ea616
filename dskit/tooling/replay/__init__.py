"""Replays of public dialogue-state data sets through the real engine (``dskit replay``).

Each turn of a data set becomes engine commands (one task per domain, one slot per data-set slot);
:func:`dskit.turn.machine.step` applies them and the slots it keeps are compared with the gold state.
The point is not to train or score a tracker but to check the engine on tens of thousands of real
state changes (additions, overwrites, deletions, several domains at once) and to measure its speed.

- :mod:`.crosswoz`: CrossWOZ, from the gold state deltas or from the gold user dialogue acts;
- :mod:`.risawoz`: RiSAWOZ, from the per-turn ``turn_inform`` deltas;
- :mod:`.driver`: the catalog built per data set and the engine calls;
- :mod:`.score`: joint goal accuracy and slot accuracy.

See docs/replay.md for the method and the figures.
"""

from __future__ import annotations

from .crosswoz import MODES, replay_crosswoz
from .risawoz import replay_risawoz
from .score import ReplayResult

__all__ = ["MODES", "ReplayResult", "replay_crosswoz", "replay_risawoz"]
