"""The turn: commands in, effects through one reducer, a decision out.

Holds: the effects (``effects``), the turn's ledger (``turn``) and its slot writes (``slot_writes``),
the one reducer that applies effects to the state (``reducer``), the typed commands and their registry
(``commands``) and the JSON schema a constraining server decodes them under (``command_schema``), the engine's own readings when the model gave none (``backup``), sub-tasks
(``subtasks``), the decision (``decide``), reading the model's JSON (``understanding``) and the whole
turn (``machine``).

May import: the base, the catalog, the state and the rules.
"""
