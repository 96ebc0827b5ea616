"""Generating code nodes: bundle the engine into pasted scripts, describe them, run them like Dify.

Imports nothing from DSL building or running; :mod:`dskit.tooling.dslbuild` uses it for the code
nodes inside a Chatflow, :mod:`dskit.tooling.generated` for the code_nodes/ folder.
"""
