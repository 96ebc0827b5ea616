"""Building Chatflow DSL files: node data, the three layouts, their prompts, layout, check, render.

Nothing here runs a Chatflow (that is :mod:`dskit.tooling.dslrun`); code nodes come from
:mod:`dskit.tooling.codegen`.
"""
