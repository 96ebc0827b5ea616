"""The names a Python statement binds at the top of its module: what the bundler and the deferred-code
writer both read, in a module of its own so neither imports the other for it."""

from __future__ import annotations

import ast


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for elt in target.elts for name in _target_names(elt)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def bound_names(node: ast.stmt) -> list[str]:
    """Top-level names a statement binds (defs, classes, assignments, loop and with targets)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [name for target in node.targets for name in _target_names(target)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return _target_names(node.target)
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return _target_names(node.target) + [n for s in node.body + node.orelse for n in bound_names(s)]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        names = [n for item in node.items if item.optional_vars for n in _target_names(item.optional_vars)]
        return names + [n for s in node.body for n in bound_names(s)]
    if isinstance(node, (ast.If, ast.While)):
        return [n for s in node.body + node.orelse for n in bound_names(s)]
    if isinstance(node, ast.Try):
        blocks = node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
        return [n for s in blocks for n in bound_names(s)] + [h.name for h in node.handlers if h.name]
    return []


__all__ = ["bound_names"]
