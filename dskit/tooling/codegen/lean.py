"""What a code node pays for before ``main`` runs, cut to what it uses: the bundle's cold start.

dify-sandbox runs every code node in a fresh interpreter, so each call pays for compiling the pasted
script and for everything its module level does. Three things cost more than the code itself, and the
bundler (:mod:`.bundle`) rewrites them without changing what the node computes:

- **Names used only in annotations.** Every engine module has ``from __future__ import annotations``,
  so an annotation is never evaluated: a ``TypedDict`` or ``from typing import Any`` that only
  annotations mention is left out, and with it the ``typing`` import (:func:`runtime_names`).
- **Dataclasses.** ``@dataclass`` imports ``dataclasses`` (and with it ``inspect``, ``ast``, ``dis``,
  ...) and generates each class's methods with ``exec`` when the module runs. A plain dataclass is
  written out instead: the same ``__init__`` (defaults and ``default_factory`` included), ``__repr__``,
  ``__eq__``, ``__hash__``, ``__match_args__`` and, when frozen, the same refusal to assign
  (:func:`expand_dataclasses`). Anything beyond that (inheritance, ``order``, ``slots``, other
  ``field()`` options, ``InitVar``/``ClassVar``, uses of ``dataclasses.fields`` and friends) keeps its
  decorator.
- **Regular expressions.** A module-level ``X = re.compile(...)`` is compiled on its first use
  instead (:data:`LAZY_PATTERN`): a turn compiles only the patterns it needs. Only names used solely as
  ``X.method(...)`` are deferred; the first use puts the compiled pattern in ``X``'s place.
- **TypedDicts.** ``import typing`` costs a third of a bare interpreter's start, and a ``TypedDict``
  the engine uses at run time only to call it or to read its keys (``Decision.__annotations__``) does
  not need it: such a class is written out as a ``dict`` subclass whose call returns a plain dict, with
  the ``__annotations__`` (the annotation text, where typing wraps it in a ``ForwardRef``),
  ``__total__``, ``__required_keys__`` and ``__optional_keys__`` typing gives it
  (:func:`expand_typed_dicts`). A TypedDict used any other way (as a value, in ``isinstance``) keeps
  its base.

What is left of a node's cold start is mostly compiling the code its turn runs; the functions and
methods most ordinary turns do not call are kept as text and compiled on first call
(:mod:`.deferred`). Together (issue 22), an ordinary turn of ``state.py`` costs 5.9 times a bare
interpreter start in instructions (8.4 before; wall clock on a busy 2-core machine 3.9 from 5.6),
``history.py`` 2.2 (2.45) and ``context.py`` 5.5 (7.4); code_nodes/README.md gives every node
(``dskit bench nodes --cold``). Two more rewrites cut what the parser reads (it reads every token on every
run): the type hints of functions are left out (:func:`without_function_hints`, 4 % of an ordinary turn
of ``state.py`` in instructions) and module-level tables of words become one string split at run time
(:func:`word_tables_as_text`, 3 %). Dicts of plain data become one JSON text read by ``json.loads``
(:func:`dict_tables_as_json`): the parser allocates its token records in doubling blocks, so a script
just past 32,768 tokens pays for 32,768 more (1.4 % of an ordinary turn of ``state.py``, which the data
tables took back below it). Docstrings and comments cost 1 % and 0.3 %: the files keep them.

``tests/test_bundle_lean.py`` checks each rewrite against the original (same values, same errors).
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterable

LAZY_NAME = "_LazyPattern"
LAZY_PATTERN = f'''class {LAZY_NAME}:
    """re.compile deferred to the first use; that use puts the compiled pattern in the name's place."""

    __slots__ = ("_name", "_args")

    def __init__(self, name, *args):
        self._name = name
        self._args = args

    def __getattr__(self, attribute):
        pattern = re.compile(*self._args)
        globals()[self._name] = pattern
        return getattr(pattern, attribute)'''

# ---------------------------------------------------------------- names used only in annotations


def without_annotations(stmt: ast.stmt) -> ast.stmt:
    """A copy of ``stmt`` without the annotations Python never evaluates under
    ``from __future__ import annotations`` (arguments, returns, variable annotations). The class-body
    annotations of a decorated class stay: a decorator such as ``@dataclass`` reads them."""
    clone = copy.deepcopy(stmt)
    _strip(clone, keep_fields=False)
    return clone


def _strip(node: ast.AST, keep_fields: bool) -> None:
    if isinstance(node, ast.ClassDef):
        for child in node.bases + node.keywords + node.decorator_list:
            _strip(child, False)
        for child in node.body:
            _strip(child, keep_fields=bool(node.decorator_list))
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        node.returns = None
    if isinstance(node, ast.arg):
        node.annotation = None
    if isinstance(node, ast.AnnAssign) and not keep_fields:
        node.annotation = ast.Constant(value="")
    for child in ast.iter_child_nodes(node):
        _strip(child, False)


# ---------------------------------------------------------------- dataclasses written out

_SIMPLE_OPTIONS = {"frozen"}


class _NotPlain(Exception):
    """This dataclass uses something the expansion does not reproduce: keep its decorator."""


def expand_dataclasses(source: str, names: Iterable[str] = ("dataclass",)) -> str:
    """``source`` with every plain ``@dataclass`` class written out as an ordinary class.

    ``names`` are the names ``dataclass`` is imported under. Returns ``source`` unchanged when the
    module uses any other part of ``dataclasses`` than ``dataclass`` and ``field``.
    """
    tree = ast.parse(source)
    imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                and node.module == "dataclasses" for alias in node.names}
    if imported - {"dataclass", "field"} or any(isinstance(node, ast.Import) and any(
            a.name == "dataclasses" for a in node.names) for node in tree.body):
        return source
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []  # (first line, last line, replacement), 1-based inclusive
    plain = _plain_classes(tree, set(names))
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or len(node.decorator_list) != 1:
            continue
        options = _dataclass_options(node.decorator_list[0], set(names))
        if options is None:
            continue
        try:
            text = _expanded_class(node, lines, frozen=options.get("frozen", False), plain_bases=plain)
        except _NotPlain:
            continue
        first = node.decorator_list[0].lineno
        edits.append((first, node.end_lineno or node.lineno, text))
    for first, last, text in reversed(edits):
        lines[first - 1:last] = [text]
    return "".join(lines)


def _dataclass_options(decorator: ast.expr, names: set[str]) -> dict[str, bool] | None:
    """{"frozen": ...} for ``@dataclass`` / ``@dataclass(frozen=True)``; None for anything else."""
    if isinstance(decorator, ast.Name) and decorator.id in names:
        return {}
    if isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) and decorator.func.id in names \
            and not decorator.args:
        options = {}
        for keyword in decorator.keywords:
            if keyword.arg not in _SIMPLE_OPTIONS or not isinstance(keyword.value, ast.Constant) \
                    or not isinstance(keyword.value.value, bool):
                return None
            options[keyword.arg] = keyword.value.value
        return options
    return None


def _plain_classes(tree: ast.Module, names: set[str]) -> set[str]:
    """The module's classes that are not dataclasses (no decorator at all): a dataclass that inherits from
    one of them takes its methods and class attributes but no fields, so writing it out stays exact."""
    return {node.name for node in tree.body if isinstance(node, ast.ClassDef) and not node.decorator_list}


def _expanded_class(node: ast.ClassDef, lines: list[str], *, frozen: bool, plain_bases: set[str] = frozenset()) -> str:
    if node.keywords or any(not (isinstance(base, ast.Name) and base.id in plain_bases) for base in node.bases):
        raise _NotPlain("inheritance from a dataclass, or from a class of another module")
    defined = {stmt.name for stmt in node.body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if defined & {"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__post_init__"}:
        raise _NotPlain("own dunder methods")
    fields: list[tuple[str, str | None, str | None]] = []  # (name, default source, factory source)
    edits: list[tuple[int, int, int, int, str]] = []
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign):
            continue
        if not isinstance(stmt.target, ast.Name) or not stmt.simple:
            raise _NotPlain("odd field")
        annotation = ast.unparse(stmt.annotation)
        if re.match(r"^(typing\.)?(ClassVar|InitVar|dataclasses\.InitVar)\b", annotation.strip("'\"")):
            raise _NotPlain("ClassVar/InitVar")
        name, value = stmt.target.id, stmt.value
        if value is None:
            fields.append((name, None, None))
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "field":
            if value.args or len(value.keywords) != 1 or value.keywords[0].arg != "default_factory":
                raise _NotPlain("field() options")
            fields.append((name, None, ast.unparse(value.keywords[0].value)))
            # ``name: T = field(...)`` becomes ``name: T``: a dataclass leaves no class attribute there.
            edits.append((stmt.lineno, stmt.col_offset, value.end_lineno or stmt.lineno, value.end_col_offset or 0,
                          f"{name}: {_source_segment(lines, stmt.annotation)}"))
        else:
            fields.append((name, "default", None))
    if not fields:
        raise _NotPlain("no fields")
    seen_default = False
    for name, default, factory in fields:
        if default or factory:
            seen_default = True
        elif seen_default:
            raise _NotPlain("non-default after default")  # a dataclass refuses this; keep its error
    body = _class_text(node, lines, edits)
    return body + _methods(node.name, fields, frozen)


def _source_segment(lines: list[str], node: ast.expr) -> str:
    segment = ast.get_source_segment("".join(lines), node)
    return segment if segment is not None else ast.unparse(node)


def _class_text(node: ast.ClassDef, lines: list[str], edits: list[tuple[int, int, int, int, str]]) -> str:
    """The class's own lines (decorator left out), with the ``field(...)`` defaults removed."""
    start, end = node.lineno, node.end_lineno or node.lineno
    text = lines[start - 1:end]
    for first, first_col, last, last_col, replacement in sorted(edits, reverse=True):
        i, j = first - start, last - start
        text[i:j + 1] = [text[i][:first_col] + replacement + text[j][last_col:]]
    out = "".join(text)
    return out if out.endswith("\n") else out + "\n"


def _methods(class_name: str, fields: list[tuple[str, str | None, str | None]], frozen: bool) -> str:
    """The methods ``@dataclass`` would generate, as source indented for the class body."""
    names = [name for name, _, _ in fields]
    missing = "__dskit_missing"
    params, sets = [], []
    for name, default, factory in fields:
        if factory is not None:
            params.append(f"{name}={missing}")
            value = f"{factory}() if {name} is self.{missing} else {name}"
        elif default is not None:
            params.append(f"{name}={name}")  # evaluated in the class body: the class attribute, as @dataclass
            value = name
        else:
            params.append(name)
            value = name
        sets.append(f"object.__setattr__(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    ind = "    "
    out = ["", f"{ind}# Written out by the bundler from @dataclass{'(frozen=True)' if frozen else ''}: the same",
           f"{ind}# methods, without importing dataclasses (see dskit/tooling/codegen/lean.py)."]
    if any(factory for _, _, factory in fields):
        out.append(f"{ind}{missing} = object()")
    out.append(_wrapped(f"{ind}__match_args__ = (", [f"{name!r}," for name in names], ")", ind))
    out.append("")
    out.append(_wrapped(f"{ind}def __init__(", ["self,"] + [f"{p}," for p in params], "):", ind))
    out += [f"{ind * 2}{line}" for line in sets]
    parts = [f"{name}={{self.{name}!r}}" for name in names]
    pieces = [f'f"{{type(self).__qualname__}}({parts[0]}"'] + [f'f", {part}"' for part in parts[1:]] + ['")"']
    out += ["", f"{ind}def __repr__(self):", _wrapped(f"{ind * 2}return (", pieces, ")", ind * 2, sep=" ")]
    own = _wrapped(f"{ind * 3}return (", [f"self.{name}," for name in names], ") == (", ind * 3)
    theirs = _wrapped("", [f"other.{name}," for name in names], ")", ind * 3)
    out += ["", f"{ind}def __eq__(self, other):", f"{ind * 2}if other.__class__ is self.__class__:",
            own + theirs.lstrip(), f"{ind * 2}return NotImplemented"]
    if frozen:
        out += ["", f"{ind}def __hash__(self):",
                _wrapped(f"{ind * 2}return hash((", [f"self.{name}," for name in names], "))", ind * 2),
                "", f"{ind}def __setattr__(self, name, value):",
                f'{ind * 2}raise AttributeError(f"cannot assign to field {{name!r}}")',
                "", f"{ind}def __delattr__(self, name):",
                f'{ind * 2}raise AttributeError(f"cannot delete field {{name!r}}")']
    else:
        out += ["", f"{ind}__hash__ = None"]
    return "\n".join(out) + "\n"


def _wrapped(head: str, items: list[str], tail: str, indent: str, *, width: int = 100, sep: str = " ") -> str:
    """``head`` + items + ``tail`` on one line when it fits, else the items on lines of their own.

    On one line the last item's comma goes, unless it is the only one of a tuple (``('a',)``).
    """
    last = items[-1] if items else ""
    if last.endswith(",") and (len(items) > 1 or not tail.startswith(")") or head.rstrip().endswith("def __init__(")):
        last = last[:-1]
    line = head + sep.join(items[:-1] + [last]) + tail
    if len(line) <= width:
        return line
    rows, row = [], indent + "    "
    for item in items:
        if len(row) + len(item) + 1 > width and row.strip():
            rows.append(row.rstrip())
            row = indent + "    "
        row += item + sep
    rows.append(row.rstrip())
    return head + "\n" + "\n".join(rows) + "\n" + indent + tail


# ---------------------------------------------------------------- regular expressions on first use


def lazy_pattern_names(trees: Iterable[ast.Module]) -> set[str]:
    """Module-level ``X = re.compile(...)`` names that every bundled module uses only as ``X.attr``."""
    candidates: set[str] = set()
    trees = list(trees)
    for tree in trees:
        for stmt in tree.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and _is_re_compile(stmt.value):
                candidates.add(stmt.targets[0].id)
    for tree in trees:
        parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in candidates and isinstance(node.ctx, ast.Load):
                parent = parents.get(id(node))
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    candidates.discard(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                candidates -= set(node.names)
    assigned = [stmt.targets[0].id for tree in trees for stmt in tree.body if isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)]
    return {name for name in candidates if assigned.count(name) == 1}


def _is_re_compile(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and not node.keywords
            and 1 <= len(node.args) <= 2)


def defer_patterns(source: str, names: set[str]) -> str:
    """``source`` with ``X = re.compile(args)`` written ``X = _LazyPattern("X", args)`` for ``names``."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    inserts: list[tuple[int, int, int, str]] = []  # (line, start col, end col, replacement)
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id in names and _is_re_compile(stmt.value):
            func, first_arg = stmt.value.func, stmt.value.args[0]
            inserts.append((first_arg.lineno, first_arg.col_offset, first_arg.col_offset,
                            f"{stmt.targets[0].id!r}, "))
            inserts.append((func.lineno, func.col_offset, func.end_col_offset or func.col_offset, LAZY_NAME))
    for row, start, end, text in sorted(inserts, key=lambda e: (e[0], e[1]), reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + text + line[end:]
    return "".join(lines)


# ---------------------------------------------------------------- TypedDicts written out

TYPED_DICT_ATTRIBUTES = frozenset({"__annotations__", "__required_keys__", "__optional_keys__", "__total__"})


def typed_dict_candidates(tree: ast.Module, names: set[str]) -> dict[str, ast.ClassDef]:
    """Class-based TypedDicts of one module that are plain enough to write out: ``class X(TypedDict)``
    (``total=`` allowed) or ``class Y(X)`` with ``X`` one of them, a body of docstring and ``name: type``
    fields only, and the header on one line. ``names``: what ``typing.TypedDict`` is imported as."""
    found: dict[str, ast.ClassDef] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.decorator_list or len(node.bases) != 1:
            continue
        base = node.bases[0]
        if not isinstance(base, ast.Name) or (base.id not in names and base.id not in found):
            continue
        if any(k.arg != "total" or not isinstance(k.value, ast.Constant) or not isinstance(k.value.value, bool)
               for k in node.keywords) or (node.keywords and base.id not in names):
            continue
        body = node.body[1:] if _is_docstring(node.body[0]) else node.body
        fields = [s for s in body if isinstance(s, ast.AnnAssign)]
        if not fields or len(fields) != len(body) or node.body[0].lineno == node.lineno or any(
                s.value is not None or not isinstance(s.target, ast.Name) or not s.simple for s in fields):
            continue
        found[node.name] = node
    return found


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def typed_dicts_used_plainly(trees: Iterable[ast.Module], candidates: set[str]) -> set[str]:
    """The candidates every module uses only in ways a written-out class reproduces: called (a plain
    dict comes back), read as ``X.__annotations__`` / ``__required_keys__`` / ``__optional_keys__`` /
    ``__total__``, as the base of another candidate, or in annotations (never evaluated)."""
    bad: set[str] = set()
    for tree in trees:
        plain = without_annotations(tree)
        parents = {id(child): parent for parent in ast.walk(plain) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(plain):
            if not isinstance(node, ast.Name) or node.id not in candidates:
                continue
            parent = parents.get(id(node))
            if isinstance(node.ctx, ast.Store) or isinstance(parent, (ast.Global, ast.Nonlocal)):
                bad.add(node.id)
            elif isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in TYPED_DICT_ATTRIBUTES:
                continue
            elif isinstance(parent, ast.Call) and parent.func is node:
                continue
            elif isinstance(parent, ast.ClassDef) and node in parent.bases and parent.name in candidates:
                continue
            else:
                bad.add(node.id)
    kept = set(candidates) - bad
    return kept


def expand_typed_dicts(source: str, classes: set[str]) -> str:
    """``source`` with each TypedDict in ``classes`` (from :func:`typed_dict_candidates` and
    :func:`typed_dicts_used_plainly`) written as a ``dict`` subclass whose call returns a plain dict,
    with the ``__annotations__``, ``__total__``, ``__required_keys__`` and ``__optional_keys__`` typing
    would give it (annotations as their text: typing wraps the text in a ``ForwardRef``)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    info: dict[str, tuple[dict[str, str], frozenset[str], frozenset[str], bool]] = {}
    edits: list[tuple[int, int, str]] = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name not in classes:
            continue
        base = node.bases[0].id  # type: ignore[attr-defined]
        total = next((bool(k.value.value) for k in node.keywords), True)  # type: ignore[attr-defined]
        own = {s.target.id: _source_segment(lines, s.annotation) for s in node.body  # type: ignore[union-attr]
               if isinstance(s, ast.AnnAssign)}
        inherited = info.get(base, ({}, frozenset(), frozenset(), True))
        annotations = {**inherited[0], **own}
        required = inherited[1] | (frozenset(own) if total else frozenset())
        optional = inherited[2] | (frozenset() if total else frozenset(own))
        info[node.name] = (annotations, required, optional, total)
        ind = "    "
        header = f"class {node.name}(dict):\n"
        tail = [
            "",
            f"{ind}# Written out by the bundler from a TypedDict: calling it makes a plain dict, as TypedDict does,",
            f"{ind}# and it lists its keys as typing would, without importing typing (dskit/tooling/codegen/lean.py).",
            _wrapped(f"{ind}__annotations__ = {{", [f"{k!r}: {v!r}," for k, v in annotations.items()], "}", ind),
            f"{ind}__total__ = {total!r}",
            _wrapped(f"{ind}__required_keys__ = frozenset({{", [f"{k!r}," for k in sorted(required)], "})", ind)
            if required else f"{ind}__required_keys__ = frozenset()",
            _wrapped(f"{ind}__optional_keys__ = frozenset({{", [f"{k!r}," for k in sorted(optional)], "})", ind)
            if optional else f"{ind}__optional_keys__ = frozenset()",
            "",
            f"{ind}def __new__(cls, *args, **kwargs):",
            f"{ind * 2}return dict(*args, **kwargs)",
        ]
        edits.append((node.lineno, node.lineno, header))
        end = node.end_lineno or node.lineno
        edits.append((end + 1, end, "\n".join(tail) + "\n"))  # an insertion after the class's last line
    for first, last, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        lines[first - 1:last] = [text]
    return "".join(lines)


# ---------------------------------------------------------------- type hints of functions

def without_function_hints(source: str) -> str:
    """``source`` without the type hints of its functions: the annotations of arguments and returns,
    and of local variables given a value (``x: T = v`` becomes ``x = v``).

    Under ``from __future__ import annotations`` Python never evaluates them, but the parser still reads
    every one on every sandbox run: about 4 % of an ordinary turn of ``state.py`` (issue 22). Class-body
    annotations (fields, ``TypedDict`` keys) and module-level ones stay: a class may read them at run
    time. The engine's source in ``dskit/`` keeps its hints; the code nodes are generated from it.
    """
    tree = ast.parse(source)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), byte offsets into the source
    offsets = _line_offsets(source)
    raw = source.encode("utf-8")

    def at(line: int, col: int) -> int:
        return offsets[line - 1] + col

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if not isinstance(node, ast.Lambda):
                _unhint_signature(node, at, raw, edits)
            for child in ast.iter_child_nodes(node):
                visit(child, True)
            return
        if isinstance(node, ast.ClassDef):
            for child in ast.iter_child_nodes(node):
                visit(child, False if child in node.body else in_function)
            return
        if in_function and isinstance(node, ast.AnnAssign) and node.value is not None and node.simple \
                and isinstance(node.target, ast.Name):
            name_end = at(node.target.end_lineno, node.target.end_col_offset)
            value_start = at(node.value.lineno, node.value.col_offset)
            edits.append((name_end, value_start, " = "))
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    for stmt in tree.body:
        visit(stmt, False)
    return _with_byte_edits(raw, edits)


def _with_byte_edits(raw: bytes, edits: list[tuple[int, int, str]]) -> str:
    """``raw`` with each (start, end, replacement) byte range replaced, the last first so that the offsets
    of the others still hold; the edits must not overlap."""
    for start, end, text in sorted(edits, reverse=True):
        raw = raw[:start] + text.encode("utf-8") + raw[end:]
    return raw.decode("utf-8")


def _line_offsets(source: str) -> list[int]:
    """Byte offset of each line's start (the ast's columns are UTF-8 byte offsets)."""
    offsets, total = [], 0
    for line in source.encode("utf-8").splitlines(keepends=True):
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def _unhint_signature(node: ast.FunctionDef | ast.AsyncFunctionDef, at: Callable[[int, int], int], raw: bytes,
                      edits: list[tuple[int, int, str]]) -> None:
    """Edits that take the annotations out of one signature: ``x: T = d`` -> ``x=d``, ``-> R`` gone."""
    args = node.args
    positional = args.posonlyargs + args.args
    defaults: dict[int, ast.expr] = {}
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        defaults[id(arg)] = default
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            defaults[id(arg)] = default
    for arg in positional + args.kwonlyargs + [args.vararg, args.kwarg]:
        if arg is None or arg.annotation is None:
            continue
        name_end = at(arg.lineno, arg.col_offset) + len(arg.arg.encode("utf-8"))
        default = defaults.get(id(arg))
        if default is not None:
            edits.append((name_end, at(default.lineno, default.col_offset), "="))
        else:
            edits.append((name_end, at(arg.annotation.end_lineno, arg.annotation.end_col_offset), ""))
    if node.returns is not None:
        arrow = raw.rindex(b"->", 0, at(node.returns.lineno, node.returns.col_offset))
        start = arrow
        while raw[start - 1:start] in (b" ", b"\t"):
            start -= 1
        edits.append((start, at(node.returns.end_lineno, node.returns.end_col_offset), ""))


# ---------------------------------------------------------------- word tables

TABLE_MIN_WORDS = 8
_SEPARATORS = ("|", " ", ",", "/", ";", "#", "\t")


def word_tables_as_text(source: str) -> str:
    """``source`` with each module-level table of words written as one string split at run time:
    ``CANCEL = ("不要了", "不用了", ...)`` becomes ``CANCEL = tuple("不要了|不用了|...".split("|"))``.

    The parser reads each quoted word as a token of its own; one string is one token. The cue tables
    of an ordinary turn of ``state.py`` hold about two thousand words: about 3 % of the turn (issue 22).
    Only a tuple, list, set or ``frozenset(...)`` of at least :data:`TABLE_MIN_WORDS` plain strings in a
    statement that runs once (module or class level, outside lambdas and comprehensions) is rewritten,
    with a separator none of its words holds: the same values, in the same order.
    """
    tree = ast.parse(source)
    offsets = _line_offsets(source)
    raw = source.encode("utf-8")
    edits: list[tuple[int, int, str]] = []

    def at(line: int, col: int) -> int:
        return offsets[line - 1] + col

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return
        text = _table_text(node)
        if text is not None:
            edits.append((at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset), text))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    def statements(body: list[ast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, ast.ClassDef):
                statements(stmt.body)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                visit(stmt.value)

    statements(tree.body)
    return _with_byte_edits(raw, edits)


def _table_text(node: ast.AST) -> str | None:
    """The split-string form of a literal table of words, or None when ``node`` is not one."""
    kind = None
    literal = node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "frozenset" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], (ast.Tuple, ast.List, ast.Set)):
        kind, literal = "frozenset", node.args[0]
    elif isinstance(node, ast.Tuple):
        kind = "tuple"
    elif isinstance(node, ast.Set):
        kind = "set"
    elif isinstance(node, ast.List):
        kind = "list"
    if kind is None or not isinstance(literal, (ast.Tuple, ast.List, ast.Set)):
        return None
    words = [elt.value for elt in literal.elts if isinstance(elt, ast.Constant) and type(elt.value) is str]
    if len(words) < TABLE_MIN_WORDS or len(words) != len(literal.elts):
        return None
    separator = next((s for s in _SEPARATORS if not any(s in word for word in words)), None)
    if separator is None:
        return None
    split = f"{separator.join(words)!r}.split({separator!r})"
    return split if kind == "list" else f"{kind}({split})"


JSON_TABLE_MIN_ITEMS = 16
_JSON_LEAVES = (str, int, float, bool, type(None))


def dict_tables_as_json(source: str) -> str:
    """``source`` with each module- or class-level dict of plain data written as one JSON text that
    ``json.loads`` reads when the module runs: ``MESSAGES = {"zh": {...}}`` becomes
    ``MESSAGES = json.loads(r'''{"zh": {...}}''')``, one entry a line.

    The parser reads every key, colon, value and comma of a dict as a token of its own; one string is one
    token, and json's C decoder reads it in a fraction of the parser's time. Past 32,768 tokens the
    parser also allocates 32,768 more token records (its array doubles): the state node's script stood
    just below that, and the data tables hold thousands of tokens (issue 22). Only a dict literal whose
    keys are all strings and whose values are strings, numbers, booleans, None, or dicts and lists of
    them, with at least :data:`JSON_TABLE_MIN_ITEMS` values in all, is rewritten: JSON gives back those
    types exactly (a tuple or a set would come back a list, so a dict holding one is left alone).
    ``import json`` is added when the module does not import it.
    """
    import json

    tree = ast.parse(source)
    offsets = _line_offsets(source)
    edits: list[tuple[int, int, str]] = []
    for stmt in _run_once_assignments(tree.body):
        if not isinstance(stmt.value, ast.Dict):
            continue
        try:
            data = ast.literal_eval(stmt.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        leaves = _json_leaves(data)
        if leaves is None or leaves < JSON_TABLE_MIN_ITEMS:
            continue
        text = json.dumps(data, ensure_ascii=False, indent=1)
        if "'''" in text or json.loads(text) != data:
            continue
        node = stmt.value
        edits.append((offsets[node.lineno - 1] + node.col_offset, offsets[node.end_lineno - 1] + node.end_col_offset,
                      f"json.loads(r'''{text}''')"))
    if not edits:
        return source
    if not any(isinstance(s, ast.Import) and any(a.name == "json" and a.asname is None for a in s.names)
               for s in tree.body):
        edits.append(_import_json_edit(tree, offsets))
    return _with_byte_edits(source.encode("utf-8"), edits)


def _run_once_assignments(body: list[ast.stmt]) -> Iterable[ast.Assign | ast.AnnAssign]:
    """The assignments with a value at module level and in class bodies: statements that run once."""
    for stmt in body:
        if isinstance(stmt, ast.ClassDef):
            yield from _run_once_assignments(stmt.body)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            yield stmt


def _json_leaves(data: object) -> int | None:
    """How many plain values ``data`` holds, or None when JSON would not give it back as it is."""
    if type(data) in _JSON_LEAVES:
        finite = type(data) is not float or (data == data and data not in (float("inf"), float("-inf")))
        return 1 if finite else None
    if type(data) is dict and all(type(key) is str for key in data):
        counts = [_json_leaves(value) for value in data.values()]
    elif type(data) is list:
        counts = [_json_leaves(value) for value in data]
    else:
        return None
    return None if None in counts else sum(counts)


def _import_json_edit(tree: ast.Module, offsets: list[int]) -> tuple[int, int, str]:
    """An edit that imports json before the module's first statement after its docstring and
    ``from __future__`` imports."""
    for stmt in tree.body:
        docstring = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
            and isinstance(stmt.value.value, str)
        future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if not (docstring or future):
            start = offsets[stmt.lineno - 1]
            return start, start, "import json\n"
    return offsets[-1], offsets[-1], "\nimport json\n"
