"""Dialogue State Kit: dependable multi-turn dialogue for Dify.

The modules directly in this package are the *engine*: standard library only, because the same code
is bundled into Dify code nodes (see ``dskit gen``) and called by the plugin tools. The command line
and every tool that needs third-party libraries live in :mod:`dskit.tooling` and are never bundled.

Engine modules follow two rules so that ``dskit gen`` can paste them into one script:
imports between engine modules are written ``from .module import name`` (never ``import dskit.x``),
and every top-level name is unique across the engine modules.
"""

__version__ = "0.2.0"
