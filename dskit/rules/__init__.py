"""The rules: readers of a message's forms, and admission, which judges what a turn may change.

Holds: the readers — times of day (``clock``), what a number counts (``counts``), negation's scope
(``negation``), questions, requests and social clauses (``cues``), names and their boundaries
(``matching``, ``wordfind``), filler (``noise``), the shape of a slot's value (``slot_shapes``) — the
evidence a message gives (``grounding``), offers the user took (``offers``) and the named admission
rules (``admission``: each a pure function from the evidence and a proposed effect to admit, refuse
with a reason, or clarify).

May import: the base, the catalog, the state, and of the turn only what a rule judges: the effects
(``turn/effects.py``) and the turn they would join (``turn/turn.py``); never commands, the reducer or
the decision.
"""
