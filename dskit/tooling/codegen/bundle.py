"""Bundle engine modules into one self-contained code-node script.

A Dify code node is a single pasted file that may import the standard library only. The engine is
written as ordinary modules that import each other with ``from .module import name``; this module
follows those imports (by reading the source, never by importing it), orders the modules so each
comes after what it needs, and pastes their bodies one after another with the relative imports
removed. Because every public top-level name is unique across engine modules (docs/engine-api.md),
removing ``from .catalog import load_catalog`` leaves ``load_catalog`` pointing at the pasted
definition. Private names (``_norm``) are the modules' own business: where two bundled modules each
define one, both are renamed after their module (``_classic_norm``, :func:`separate_private_names`),
so the engine is written with ordinary names and the bundle still has one binding per name.

Definitions the entry function cannot reach are left out (``prune``) so a node carries only the code
it runs; names only annotations mention count as unreached, since annotations are never evaluated
(``from __future__ import annotations``). With ``lean`` (the default) the bundle also writes plain
dataclasses out and compiles module-level regular expressions on first use, so a fresh interpreter
pays only for what the turn needs (:mod:`.lean`; measured by ``dskit bench nodes --cold``). With
``defer``, the functions and methods named there (rare.json: what most ordinary turns do not call) are
kept as their own text and compiled only when first called (:mod:`.deferred`). Anything that would make the result wrong — a name defined in two modules, a name that
shadows a builtin or the driver Dify appends, an import cycle, a non-standard import — fails loudly
with :class:`BundleError` instead of producing a script that misbehaves in Dify. The output depends
only on the sources, so ``dskit gen --check`` can compare it byte for byte.
"""

from __future__ import annotations

import ast
import builtins
import io
import re
import symtable
import sys
import tokenize
from dataclasses import dataclass, field
from collections.abc import Iterable
from pathlib import Path

from dskit.tooling.codegen import deferred as _deferred
from dskit.tooling.codegen.names import bound_names
from dskit.tooling.codegen import lean as _lean
from dskit.tooling.codegen.pythons import in_a_stdlib

ENGINE_PACKAGE = "dskit"
ENGINE_DIR = Path(__file__).resolve().parents[2]
# Names Dify's python3 driver binds after the pasted code (graphon code_runtime), plus ``main``.
DRIVER_NAMES = {"main", "inputs_obj", "output_obj", "output_json", "result"}
DRIVER_IMPORTS = {"json": "import json", "b64decode": "from base64 import b64decode"}


class BundleError(Exception):
    """The engine sources cannot be bundled into a correct script; the message says why."""


@dataclass(frozen=True)
class MainParam:
    """One parameter of the generated ``main``: a Dify input variable."""

    name: str
    annotation: str = "str"
    default: str = '""'


@dataclass
class _Module:
    """One engine module as the bundler sees it."""

    name: str
    path: Path
    source: str
    summary: str
    where: str  # its path as the banner and errors show it: dskit/rules/admission.py
    deps: list[str] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (asname, name) from relative imports
    imports: dict[str, str] = field(default_factory=dict)  # bound name -> normalised import line
    futures: set[str] = field(default_factory=set)
    drop: list[tuple[int, int]] = field(default_factory=list)  # 1-based inclusive line ranges
    stmts: list[ast.stmt] = field(default_factory=list)  # kept top-level statements


def _docstring_summary(tree: ast.Module) -> str:
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


def _is_type_checking_block(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def _is_main_guard(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _is_dunder_all(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


_MODULE_CACHE: dict[tuple[str, str, str], _Module] = {}


def engine_paths(package_dir: Path = ENGINE_DIR) -> dict[str, Path]:
    """Every engine module by its name: the file's stem, unique across the engine's part folders
    (``rules/admission.py`` is ``admission``), the tooling left out."""
    paths: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir).parts
        if parts[0] == "tooling" or path.stem in ("__init__", "__main__"):
            continue
        if path.stem in paths:
            raise BundleError(f"two engine modules named {path.stem}: {paths[path.stem]} and {path}")
        paths[path.stem] = path
    return paths


def engine_module(name: str, package_dir: Path = ENGINE_DIR, package: str = ENGINE_PACKAGE) -> str:
    """The dotted import name of the engine module called ``name``: ``admission`` -> ``dskit.rules.admission``."""
    parts = engine_paths(package_dir)[name].relative_to(package_dir).with_suffix("").parts
    return ".".join((package, *parts))


def _where(path: Path, package_dir: Path, package: str) -> str:
    return "/".join((package, *path.relative_to(package_dir).parts))


def read_module(name: str, package_dir: Path = ENGINE_DIR, package: str = ENGINE_PACKAGE) -> _Module:
    """Parse one engine module (cached by path and source text; the result is never mutated)."""
    path = engine_paths(package_dir).get(name)
    if path is None:
        raise BundleError(f"{package}/{name}.py: no such engine module")
    source = path.read_text(encoding="utf-8")
    key = (str(path), package, source)
    if key not in _MODULE_CACHE:
        _MODULE_CACHE[key] = _parse_module(name, path, source, package, _where(path, package_dir, package))
    return _MODULE_CACHE[key]


def _parse_module(name: str, path: Path, source: str, package: str, where: str) -> _Module:
    """Its dependencies, hoistable imports and the statements to keep."""
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as error:
        raise BundleError(f"{where}:{error.lineno}: {error.msg}") from error
    module = _Module(name=name, path=path, source=source, summary=_docstring_summary(tree), where=where)
    for index, node in enumerate(tree.body):
        span = (node.lineno, node.end_lineno or node.lineno)
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            module.drop.append(span)
        elif isinstance(node, ast.ImportFrom) and node.module == "__future__":
            module.futures.update(alias.name for alias in node.names)
            module.drop.append(span)
        elif isinstance(node, ast.ImportFrom) and node.level:
            _read_relative_import(module, node, where)
            module.drop.append(span)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            _read_stdlib_import(module, node, where, package)
            module.drop.append(span)
        elif _is_type_checking_block(node) or _is_main_guard(node) or _is_dunder_all(node):
            module.drop.append(span)
        else:
            _refuse_nested_imports(node, where, package)
            module.stmts.append(node)
    return module


def _read_relative_import(module: _Module, node: ast.ImportFrom, where: str) -> None:
    """A relative import names its module by the folders between: ``.cues`` beside it, ``..base.text``
    in another part; the module it reaches is known by its name (stems are unique)."""
    parts = (node.module or "").split(".")
    if not node.module or node.level > 2 or len(parts) != node.level:
        raise BundleError(f"{where}:{node.lineno}: only `from .module import name` or "
                          "`from ..part.module import name` is bundleable")
    target = module.path.parent.parents[node.level - 2] if node.level == 2 else module.path.parent
    if not target.joinpath(*parts[:-1], f"{parts[-1]}.py").is_file():
        raise BundleError(f"{where}:{node.lineno}: no such engine module {'.' * node.level}{node.module}")
    dep = parts[-1]
    if dep not in module.deps:
        module.deps.append(dep)
    for alias in node.names:
        if alias.name == "*":
            raise BundleError(f"{where}:{node.lineno}: `import *` is not bundleable")
        if alias.asname and alias.asname != alias.name:
            module.aliases.append((alias.asname, alias.name))


def _read_stdlib_import(module: _Module, node: ast.Import | ast.ImportFrom, where: str, package: str) -> None:
    if isinstance(node, ast.Import):
        for alias in node.names:
            _check_stdlib(alias.name, where, node.lineno, package)
            if alias.asname:
                module.imports[alias.asname] = f"import {alias.name} as {alias.asname}"
            else:
                top = alias.name.partition(".")[0]
                module.imports[top] = f"import {alias.name}"
        return
    _check_stdlib(node.module or "", where, node.lineno, package)
    for alias in node.names:
        if alias.name == "*":
            raise BundleError(f"{where}:{node.lineno}: `import *` is not bundleable")
        bound = alias.asname or alias.name
        suffix = f" as {alias.asname}" if alias.asname else ""
        module.imports[bound] = f"from {node.module} import {alias.name}{suffix}"


def _check_stdlib(name: str, where: str, lineno: int, package: str) -> None:
    if name == package or name.startswith(package + "."):
        raise BundleError(f"{where}:{lineno}: `{name}` import: engine modules import each other as "
                          "`from .module import name`")
    if not in_a_stdlib(name):  # this Python's or 3.10's (_sha256: the sandbox check wants a fallback)
        raise BundleError(f"{where}:{lineno}: `{name}` is not in the standard library; "
                          "engine modules may import the standard library only")


def _refuse_nested_imports(node: ast.stmt, where: str, package: str) -> None:
    """Imports inside functions stay in place, so they must be standard library and absolute."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.ImportFrom):
            if inner.level:
                raise BundleError(f"{where}:{inner.lineno}: relative import inside a block is not bundleable;"
                                  " move it to the top of the module")
            _check_stdlib(inner.module or "", where, inner.lineno, package)
        elif isinstance(inner, ast.Import):
            for alias in inner.names:
                _check_stdlib(alias.name, where, inner.lineno, package)


def module_order(entry_module: str, package_dir: Path = ENGINE_DIR,
                 package: str = ENGINE_PACKAGE) -> list[_Module]:
    """The entry module's closure over relative imports, dependencies first; cycles are errors."""
    modules: dict[str, _Module] = {}
    order: list[_Module] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in visiting:
            cycle = " -> ".join(visiting[visiting.index(name):] + [name])
            raise BundleError(f"import cycle between engine modules: {cycle}")
        if name in modules:
            return
        visiting.append(name)
        module = read_module(name, package_dir, package)
        for dep in sorted(module.deps):
            visit(dep)
        visiting.pop()
        modules[name] = module
        order.append(module)

    visit(entry_module)
    return order


# --------------------------------------------------------------------------------------------------
# Names: bindings, collisions, reachability
# --------------------------------------------------------------------------------------------------

def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _renamed_source(source: str, renames: dict[str, str]) -> str:
    """``source`` with every name token in ``renames`` replaced, except attributes (``x._y``) and
    keyword arguments of calls (``f(_y=1)``: the callee's parameter, which keeps its name).

    Renaming a name everywhere in one module keeps its meaning: a local of the same name is renamed
    with it and still shadows it (parameters of that name are refused before: a caller may pass them
    by keyword).
    """
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    edits: list[tuple[int, int, int, str]] = []
    for index, token in enumerate(tokens):
        if token.type != tokenize.NAME or token.string not in renames:
            continue
        before = tokens[index - 1].string if index else ""
        after = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if before == "." or (before in ("(", ",") and after == "="):
            continue
        edits.append((token.start[0], token.start[1], token.end[1], renames[token.string]))
    lines = source.splitlines(keepends=True)
    for row, start, end, new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    return "".join(lines)


def _parameter_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            names |= {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a}
    return names


def separate_private_names(modules: list[_Module], package: str = ENGINE_PACKAGE) -> list[_Module]:
    """The modules with each private top-level name that two of them define renamed after its module.

    ``_TRUE_WORDS`` in catalog.py and node_io.py become ``_catalog_TRUE_WORDS`` and
    ``_node_io_TRUE_WORDS``. Public names are an API and must be unique (:func:`check_collisions`).
    """
    owners: dict[str, list[_Module]] = {}
    for module in modules:
        for name in dict.fromkeys(n for stmt in module.stmts for n in bound_names(stmt)):
            if _private(name):
                owners.setdefault(name, []).append(module)
    shared = {name for name, found in owners.items() if len(found) > 1}
    if not shared:
        return modules
    taken = {n for module in modules for stmt in module.stmts for n in bound_names(stmt)}
    result = []
    for module in modules:
        where = module.where
        renames = {name: f"_{module.name}{name}" for name in shared if module in owners[name]}
        tree = ast.parse(module.source)
        imported = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    and node.level for alias in node.names} & shared
        if imported:
            raise BundleError(f"{where} imports {sorted(imported)}, private names that several modules define")
        parameters = _parameter_names(tree) & set(renames)
        if parameters:
            raise BundleError(f"{where}: a parameter is named {sorted(parameters)}, like a private name another "
                              "bundled module defines too; rename one of them")
        if not renames:
            result.append(module)
            continue
        clashes = sorted(new for new in renames.values() if new in taken)
        if clashes:
            raise BundleError(f"{where}: cannot rename private names to {clashes}: already defined")
        result.append(_parse_module(module.name, module.path, _renamed_source(module.source, renames), package, module.where))
    return result


def check_collisions(modules: list[_Module], package: str = ENGINE_PACKAGE) -> None:
    """Fail when two modules bind one name differently, or a name shadows a builtin or the driver."""
    defined: dict[str, str] = {}
    imported: dict[str, tuple[str, str]] = {}
    problems: list[str] = []
    shadowable = set(dir(builtins))
    for module in modules:
        where = module.where
        for stmt in module.stmts:
            for name in bound_names(stmt):
                if name in defined and defined[name] != where:
                    problems.append(f"`{name}` is defined in both {defined[name]} and {where}")
                elif name in imported:
                    problems.append(f"`{name}` is defined in {where} and imported in {imported[name][1]}")
                defined.setdefault(name, where)
                if name in DRIVER_NAMES or name in DRIVER_IMPORTS:
                    problems.append(f"`{name}` in {where} clashes with the driver Dify appends to a code node")
                if name in shadowable:
                    problems.append(f"`{name}` in {where} shadows a Python builtin for every bundled module")
        for asname, _name in module.aliases:
            if asname in defined or asname in imported:
                problems.append(f"alias `{asname}` in {where} clashes with another top-level name")
            defined.setdefault(asname, where)
        for name, line in module.imports.items():
            if name in defined:
                problems.append(f"`{name}` is imported in {where} ({line}) and defined in {defined[name]}")
            elif name in imported and imported[name][0] != line:
                problems.append(f"`{name}` is imported as `{imported[name][0]}` in {imported[name][1]} "
                                f"and as `{line}` in {where}")
            imported.setdefault(name, (line, where))
            if name in DRIVER_NAMES or (name in DRIVER_IMPORTS and DRIVER_IMPORTS[name] != line):
                problems.append(f"`{name}` ({line}) in {where} clashes with the driver Dify appends")
    if problems:
        raise BundleError("top-level name problems between bundled modules:\n"
                          + "\n".join(f"- {p}" for p in sorted(set(problems))))


def _ast_names(node: ast.AST | None) -> set[str]:
    return {inner.id for inner in ast.walk(node) if isinstance(inner, ast.Name)} if node is not None else set()


def _table_globals(table: symtable.SymbolTable) -> set[str]:
    """Module-level names a function or class body refers to (its locals and parameters excluded)."""
    names = {sym.get_name() for sym in table.get_symbols()
             if sym.is_referenced() and (sym.is_global() or (table.get_type() == "class" and not sym.is_local()))}
    for child in table.get_children():
        names |= _table_globals(child)
    return names


def _scope_names(stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, runtime: bool = False) -> set[str]:
    """What a def/class needs from module scope: decorators, defaults, annotations, bases, and its body's globals.

    ``runtime``: leave out what only annotations name (never evaluated under ``from __future__ import
    annotations``), except the field annotations of a decorated class, which a decorator may read.
    """
    if runtime:
        stmt = _lean.without_annotations(stmt)  # type: ignore[assignment]
    outer: set[str] = set()
    for decorator in stmt.decorator_list:
        outer |= _ast_names(decorator)
    if isinstance(stmt, ast.ClassDef):
        for base in stmt.bases + [k.value for k in stmt.keywords]:
            outer |= _ast_names(base)
    else:
        args = stmt.args
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            outer |= _ast_names(default)
        for arg in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if arg is not None:
                outer |= _ast_names(arg.annotation)
        outer |= _ast_names(stmt.returns)
    try:
        module_table = symtable.symtable(ast.unparse(ast.Module(body=[stmt], type_ignores=[])), "<stmt>", "exec")
        inner = set().union(*(_table_globals(child) for child in module_table.get_children()))
    except (SyntaxError, ValueError, RecursionError):
        return outer | _ast_names(stmt)
    if isinstance(stmt, ast.ClassDef):  # annotations in a class body (dataclass fields) stay visible
        inner |= {n for body_stmt in stmt.body if isinstance(body_stmt, ast.AnnAssign)
                  for n in _ast_names(body_stmt.annotation)}
    return outer | inner


# (id(stmt), runtime) -> (stmt, names); holding the statement keeps its id from being reused.
_NAMES_CACHE: dict[tuple[int, bool], tuple[ast.stmt, set[str]]] = {}
_RUNTIME_ONLY = {"on": False}  # set by bundle(): every bundled module defers its annotations


def _used_names(node: ast.stmt) -> set[str]:
    """Names a top-level statement reads from module scope (local variables of functions are not)."""
    runtime = _RUNTIME_ONLY["on"]
    cached = _NAMES_CACHE.get((id(node), runtime))
    if cached is not None and cached[0] is node:
        return cached[1]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names = _scope_names(node, runtime)
    elif runtime and isinstance(node, ast.AnnAssign):
        names = _ast_names(node.target) | _ast_names(node.value)
    else:
        names = _ast_names(node)
    _NAMES_CACHE[(id(node), runtime)] = (node, names)
    return names


def _prunable(stmt: ast.stmt) -> bool:
    """Definitions that can be dropped when nothing uses them; other statements always stay."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return all(isinstance(t, ast.Name) for t in targets)
    return False


def reachable(modules: list[_Module], roots: set[str]) -> set[int]:
    """ids of statements reachable from ``roots`` and from every statement that is not prunable."""
    by_name: dict[str, list[ast.stmt]] = {}
    alias_of: dict[str, str] = {}
    for module in modules:
        for stmt in module.stmts:
            for name in bound_names(stmt):
                by_name.setdefault(name, []).append(stmt)
        alias_of.update(dict(module.aliases))
    keep: set[int] = set()
    todo = list(roots) + list(alias_of.values())
    for module in modules:
        for stmt in module.stmts:
            if not _prunable(stmt):
                keep.add(id(stmt))
                todo.extend(_used_names(stmt))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in alias_of:
            todo.append(alias_of[name])
        for stmt in by_name.get(name, []):
            if id(stmt) not in keep:
                keep.add(id(stmt))
                todo.extend(_used_names(stmt))
    return keep


# --------------------------------------------------------------------------------------------------
# Emitting
# --------------------------------------------------------------------------------------------------

def _statement_span(stmt: ast.stmt) -> tuple[int, int]:
    first = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", [])])
    return first, stmt.end_lineno or stmt.lineno


def _module_text(module: _Module, keep: set[int]) -> str:
    """The module's source with dropped statements (and comments directly above them) removed."""
    lines = module.source.splitlines()
    removed = [False] * (len(lines) + 2)
    spans = list(module.drop) + [_statement_span(s) for s in module.stmts if id(s) not in keep]
    pruned_starts = {_statement_span(s)[0] for s in module.stmts if id(s) not in keep}
    for start, end in spans:
        for number in range(start, end + 1):
            removed[number] = True
        if start in pruned_starts:  # a pruned definition takes its leading comment block along
            number = start - 1
            while number >= 1 and lines[number - 1].lstrip().startswith("#") and not removed[number]:
                removed[number] = True
                number -= 1
    kept = [line.rstrip() for number, line in enumerate(lines, 1) if not removed[number]]
    text = _drop_dangling_comments("\n".join(kept))
    text = re.sub(r"\n{4,}", "\n\n\n", text).strip("\n")
    aliases = "\n".join(f"{asname} = {name}" for asname, name in module.aliases)
    return (aliases + "\n\n" + text).strip("\n") if aliases else text


def _import_block(modules: list[_Module], keep_names: set[str]) -> str:
    futures = sorted({f for m in modules for f in m.futures})
    lines: dict[str, None] = {}
    for module in modules:
        for name, line in module.imports.items():
            if name in keep_names:
                lines[line] = None
    plain = sorted(line for line in lines if line.startswith("import "))
    grouped: dict[str, list[str]] = {}
    for line in lines:
        if line.startswith("from "):
            source, _, what = line[len("from "):].partition(" import ")
            grouped.setdefault(source, []).append(what)
    froms = [f"from {src} import {', '.join(sorted(set(names)))}" for src, names in sorted(grouped.items())]
    out = [f"from __future__ import {', '.join(futures)}"] if futures else []
    if out and (plain or froms):
        out.append("")
    return "\n".join(out + plain + froms)


def main_function(entry_function: str, params: list[MainParam], *, pass_extra: bool = False,
                  doc: str = "Dify calls main(**inputs) with the node's input variables.",
                  numbers_for_booleans: tuple[str, ...] = ()) -> str:
    """The ``main`` Dify calls: every input has a default so a missing variable cannot crash it.

    ``numbers_for_booleans`` names outputs returned as 1/0 instead of True/False (Dify before 1.8).
    """
    signature = [f"{p.name}: {p.annotation} = {p.default}" for p in params] + ["**extra"]
    call = [f"{p.name}={p.name}" for p in params] + (["**extra"] if pass_extra else [])
    head = f"def main({', '.join(signature)}) -> dict:"
    if len(head) > 100:
        head = "def main(\n" + "".join(f"    {item},\n" for item in signature) + ") -> dict:"
    body = f"    return {entry_function}({', '.join(call)})"
    if len(body) > 100:
        body = f"    return {entry_function}(\n" + "".join(f"        {item},\n" for item in call) + "    )"
    if numbers_for_booleans:
        body = body.replace("    return ", "    outputs = ", 1) + (
            f"\n    for name in {numbers_for_booleans!r}:  # this Dify has no boolean outputs: 1/0\n"
            "        outputs[name] = int(bool(outputs[name]))\n    return outputs")
    return f'{head}\n    """{doc}"""\n{body}\n'


def _drop_dangling_comments(text: str) -> str:
    """Remove comment blocks left with no code under them (section rulers over pruned code)."""
    lines = text.split("\n")
    keep = [True] * len(lines)
    index = 0
    while index < len(lines):
        if lines[index].startswith("#") and (index == 0 or not lines[index - 1].strip()):
            end = index
            while end + 1 < len(lines) and lines[end + 1].startswith("#"):
                end += 1
            after = end + 1
            while after < len(lines) and not lines[after].strip():
                after += 1
            if after > end + 1 and (after == len(lines) or lines[after].startswith("#")):
                for number in range(index, end + 1):
                    keep[number] = False
            index = end + 1
        else:
            index += 1
    return "\n".join(line for line, kept in zip(lines, keep) if kept)


def _leaner(modules: list[_Module], package: str) -> tuple[list[_Module], bool]:
    """The modules with :mod:`.lean`'s source rewrites; whether any pattern is now compiled on first use."""
    taken = {n for m in modules for s in m.stmts for n in bound_names(s)} | {n for m in modules for n in m.imports}
    if _lean.LAZY_NAME in taken:
        raise BundleError(f"`{_lean.LAZY_NAME}` is defined by an engine module; the bundler needs the name")
    expanded = []
    for module in modules:
        names = [n for n, line in module.imports.items() if line.endswith("import dataclass")
                 or line.endswith(f"dataclass as {n}")]
        source = _lean.expand_dataclasses(module.source, names) if names else module.source
        expanded.append((module, source))
    trees = [ast.parse(source) for _, source in expanded]
    typed = {}
    for (module, _source), tree in zip(expanded, trees):
        names = {n for n, line in module.imports.items() if line == "from typing import TypedDict"
                 or line == f"from typing import TypedDict as {n}"}
        typed[module.name] = set(_lean.typed_dict_candidates(tree, names)) if names else set()
    plain_typed = _lean.typed_dicts_used_plainly(trees, set().union(*typed.values()))
    if plain_typed:
        for index, (module, source) in enumerate(expanded):
            mine = typed[module.name] & plain_typed
            if mine:
                expanded[index] = (module, _lean.expand_typed_dicts(source, mine))
                trees[index] = ast.parse(expanded[index][1])
    deferred = _lean.lazy_pattern_names(trees)
    result = []
    for module, source in expanded:
        mine = {n for s in module.stmts for n in bound_names(s)} & deferred
        if mine:
            source = _lean.defer_patterns(source, mine)
        source = _lean.word_tables_as_text(_lean.dict_tables_as_json(_lean.without_function_hints(source)))
        result.append(module if source == module.source else
                      _parse_module(module.name, module.path, source, package, module.where))
    return result, bool(deferred)


def lean_uses_pattern(modules: list[_Module], keep: set[int]) -> bool:
    """Whether a kept statement mentions the deferred-pattern class."""
    return any(_lean.LAZY_NAME in _ast_names(s) for m in modules for s in m.stmts if id(s) in keep)


_BUNDLES: dict[tuple, str] = {}  # one process makes the same bundle many times (gen, its --check, the DSL)


def _sources_fingerprint(package_dir: Path) -> str:
    """A digest of every module the bundler may read: the bundle depends on nothing else."""
    import hashlib

    digest = hashlib.sha256()
    for path in engine_paths(package_dir).values():
        digest.update(str(path.relative_to(package_dir)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def bundle(
    entry: str,
    params: list[MainParam],
    *,
    header: str = "",
    pass_extra: bool = False,
    package_dir: Path = ENGINE_DIR,
    package: str = ENGINE_PACKAGE,
    prune: bool = True,
    numbers_for_booleans: tuple[str, ...] = (),
    lean: bool = True,
    defer: Iterable[str] = (),
    skip_refused: bool = False,
) -> str:
    """One script: header, hoisted imports, each needed module's body, then ``main``.

    ``entry`` is ``"module:function"`` (``"dskit.surfaces.nodes:state_node"`` or ``"nodes:state_node"``).
    ``lean`` applies :mod:`.lean`'s rewrites (annotation-only names out, dataclasses written out,
    regular expressions compiled on first use). ``defer`` names functions (``"module:function"``) and
    methods (``"module:Class.method"``) to compile only when first called (:mod:`.deferred`); names the
    bundle does not carry are skipped, one it cannot defer unchanged is a :class:`BundleError` (with
    ``skip_refused``: compiled with the script; tests/test_deferred.py flags a list that names one). The
    output depends only on the arguments and the sources, so it is made once per process for each (the
    cache is keyed by a digest of the sources).
    """
    defer = tuple(sorted(set(defer)))
    key = (entry, tuple(params), header, pass_extra, str(package_dir), package, prune, tuple(numbers_for_booleans),
           lean, defer, skip_refused, _sources_fingerprint(package_dir))
    if key not in _BUNDLES:
        _BUNDLES[key] = _bundle(entry, params, header=header, pass_extra=pass_extra, package_dir=package_dir,
                                package=package, prune=prune, numbers_for_booleans=numbers_for_booleans, lean=lean,
                                defer=defer, skip_refused=skip_refused)
    return _BUNDLES[key]


@dataclass
class _Prepared:
    """An entry's modules after renaming and the lean rewrites, with what the bundle keeps of them."""

    function: str
    modules: list[_Module]
    keep: set[int]
    keep_names: set[str]
    lazy: bool


def _prepare(entry: str, *, package_dir: Path, package: str, prune: bool, lean: bool) -> _Prepared:
    module_name, _, function = entry.partition(":")
    module_name = module_name.removeprefix(package + ".").rpartition(".")[2]  # surfaces.nodes -> nodes
    if not function:
        raise BundleError(f"entry {entry!r} must be 'module:function'")
    modules = separate_private_names(module_order(module_name, package_dir, package), package)
    check_collisions(modules, package)
    entry_module = modules[-1]
    if function not in {n for s in entry_module.stmts for n in bound_names(s)}:
        raise BundleError(f"{package}/{module_name}.py has no top-level `{function}`")
    lazy = False
    if lean:
        modules, lazy = _leaner(modules, package)
    _RUNTIME_ONLY["on"] = lean and all("annotations" in m.futures for m in modules)
    try:
        if prune:
            keep = reachable(modules, {function})
            keep_names = {n for m in modules for s in m.stmts if id(s) in keep for n in _used_names(s)}
            keep_names |= {n for m in modules for s in m.stmts if id(s) in keep for n in bound_names(s)}
        else:
            keep = {id(s) for m in modules for s in m.stmts}
            keep_names = set(n for m in modules for n in m.imports)
    finally:
        _RUNTIME_ONLY["on"] = False
    lazy = lazy and lean_uses_pattern(modules, keep)
    if lazy:
        keep_names.add("re")  # the deferred compile needs it even if nothing else does
    keep_names |= {name for m in modules for _a, name in m.aliases}
    return _Prepared(function, modules, keep, keep_names, lazy)


@dataclass(frozen=True)
class Unit:
    """A function or method a bundle carries: ``name`` is ``function`` or ``Class.method``; ``refusal``
    says why it cannot be compiled on first call ("" when it can); ``size`` is its text's UTF-8 bytes."""

    module: str
    name: str
    refusal: str
    size: int

    @property
    def key(self) -> str:
        return f"{self.module}:{self.name}"


def bundle_units(entry: str, *, package_dir: Path = ENGINE_DIR, package: str = ENGINE_PACKAGE) -> list[Unit]:
    """Every function and method the lean, pruned bundle of ``entry`` carries, in order."""
    prepared = _prepare(entry, package_dir=package_dir, package=package, prune=True, lean=True)
    modules, keep = prepared.modules, prepared.keep
    kept = [ast.Module(body=[s for s in m.stmts if id(s) in keep], type_ignores=[]) for m in modules]
    facts = _deferred.Bundle(kept, [m.source for m in modules], all("annotations" in m.futures for m in modules))
    out = []
    for module, tree in zip(modules, kept):
        for name, (function, _owner) in _deferred.units(tree).items():
            text = _deferred.unit_text(module.source, function)
            out.append(Unit(module.name, name, _deferred.refusal(facts, name), len(text.encode("utf-8"))))
    return out


def _bundle(entry: str, params: list[MainParam], *, header: str, pass_extra: bool, package_dir: Path, package: str,
            prune: bool, numbers_for_booleans: tuple[str, ...], lean: bool, defer: tuple[str, ...] = (),
            skip_refused: bool = False) -> str:
    prepared = _prepare(entry, package_dir=package_dir, package=package, prune=prune, lean=lean)
    function, modules, keep = prepared.function, prepared.modules, prepared.keep
    keep_names, lazy = prepared.keep_names, prepared.lazy
    plain_texts: dict[str, str] = {}
    if defer:
        modules, keep, plain_texts = _defer(modules, keep, defer, package, skip_refused)
    sections = []
    for module in modules:
        body = _module_text(module, keep)
        if not body.strip():
            continue
        banner = f"# ---- {module.where} ----"
        if module.summary:
            banner += f"\n# {module.summary}"
        sections.append(f"{banner}\n\n{body}")
    parts = [header.strip("\n")] if header.strip() else []
    imports = _import_block(modules, keep_names)
    if imports:
        parts.append(imports)
    if lazy:
        parts.append("# ---- compiled on first use (dskit/tooling/codegen/lean.py) ----\n\n" + _lean.LAZY_PATTERN)
    if plain_texts:
        parts.append("# ---- compiled on first call (dskit/tooling/codegen/deferred.py) ----\n\n" + _deferred.LOADER)
    parts.extend(sections)
    parts.append("# ---- entry point ----\n\n" + main_function(function, params, pass_extra=pass_extra,
                                                             numbers_for_booleans=numbers_for_booleans))
    script = "\n\n\n".join(part.strip("\n") for part in parts) + "\n"
    if plain_texts:
        script = _deferred.group(script)
        problems = _deferred.check_deferred(script, plain_texts)
        if problems:
            raise BundleError("deferred functions came out wrong:\n" + "\n".join(f"- {p}" for p in problems))
    return script


def _defer(modules: list[_Module], keep: set[int], defer: tuple[str, ...], package: str, skip_refused: bool = False
           ) -> tuple[list[_Module], set[int], dict[str, str]]:
    """The modules with the ``defer`` units that the bundle carries written out as deferred text
    (:mod:`.deferred`), the kept statements' ids in the new modules, and each deferred unit's plain text."""
    taken = {n for m in modules for s in m.stmts for n in bound_names(s)} | {n for m in modules for n in m.imports}
    for name in (_deferred.DEFERRED_NAME, _deferred.GROUP_NAME):
        if name in taken:
            raise BundleError(f"`{name}` is defined by an engine module; the bundler needs the name")
    kept = [ast.Module(body=[s for s in m.stmts if id(s) in keep], type_ignores=[]) for m in modules]
    facts = _deferred.Bundle(kept, [m.source for m in modules], all("annotations" in m.futures for m in modules))
    wanted: dict[str, list[str]] = {}
    plain: dict[str, str] = {}
    problems = []
    for item in defer:
        module_name, _, unit = item.partition(":")
        found = facts.unit(unit)
        if found is None or modules[found[0]].name != module_name:
            continue  # not in this node (pruned, or moved: tests/test_deferred.py flags a stale list)
        reason = _deferred.refusal(facts, unit)
        if reason and skip_refused:
            continue
        if reason:
            problems.append(f"{package}/{module_name}.py: `{unit}` cannot be compiled on first call: {reason}")
            continue
        wanted.setdefault(module_name, []).append(unit)
        plain[unit] = _deferred.unit_text(modules[found[0]].source, found[1])
    if problems:
        raise BundleError("\n".join(problems))
    result: list[_Module] = []
    new_keep: set[int] = set()
    for module in modules:
        new = module
        if module.name in wanted:
            new = _parse_module(module.name, module.path, _deferred.defer_units(module.source, wanted[module.name]),
                                package, module.where)
            if len(new.stmts) != len(module.stmts):
                raise BundleError(f"{module.where}: deferring changed its statements")
        new_keep |= {id(n) for o, n in zip(module.stmts, new.stmts) if id(o) in keep}
        result.append(new)
    return result, new_keep, plain
