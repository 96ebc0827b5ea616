"""The state: what a conversation keeps between turns, and its views.

Holds: the record shapes and the keys a task carries (``records``), the task stack, the only code that
changes a task (``taskstack``), the seal (``integrity``), the state's format, loading and saving
(``state``), what a task still lacks (``gaps``) and the texts the model and the user see of a state
(``views``).

May import: the base and the catalog.
"""
