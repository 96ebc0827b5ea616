"""The surfaces: what Dify calls — code nodes and the classic layout's adapter.

Holds: the code nodes' entry functions (``nodes``), their input and output limits (``node_io``), a
turn's inputs read from the conversation (``turn_inputs``) and the classic layout's adapter
(``classic``).

May import: every other part of the engine.
"""
