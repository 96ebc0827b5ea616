"""The context: what the model reads besides the message, and what the conversation remembers.

Holds: the recent turns (``history``), the summary of older ones (``summary``), the understanding
context within a token budget (``context``), the understanding prompt (``prompts``) and long-term
memory with its storage and its filter for secrets (``memory``, ``memory_storage``, ``sensitive``).

May import: the base, the catalog, the state, the rules (to read a message) and the turn (the
commands the prompt lists).
"""
