"""Functions most turns do not call, compiled only when first called: less to compile per turn.

dify-sandbox compiles the whole pasted script on every call of a code node, and compiling is most of
what a node costs (``dskit bench nodes --cold``). Much of an engine node is code an ordinary turn does
not run: repairs of a corrupt state, rare commands, catalog checks that only fail on a broken catalog,
rare grounding cases. The bundler (:mod:`.bundle`) writes each such function as its source text beside
its name::

    repair_stack = _Deferred("repair_stack", r'''
    def repair_stack(state, catalog):
        ...
    ''')

The finished script then writes each run of such statements that stand next to each other (in the
module, or in one class body) as one call, ``_defer(locals(), r'''...''', r'''...''')`` (:func:`group`):
the same texts in the same places, one statement for Python to parse instead of one per function. Each
statement costs about 64,000 instructions to parse and compile, about as much as 600 bytes of text:
grouping the state node's 401 into 138 saves a twentieth of an ask turn.

A string costs little to compile (about 90 instructions a byte). The first call of ``repair_stack`` compiles that text in the
script's own namespace and puts the function in its name's place (:data:`LOADER`): the same function,
the same globals, the same results and exceptions; later calls go straight to it. A method is written
the same way inside its class and replaces itself on the class when first looked up.

The text is the function as the plain bundle would carry it, character for character (a reviewer
reads it where it always was; the bundler checks it). Which functions are written this way is decided
by measurement, not here: ``dskit/tooling/codegen/rare.json`` lists them per node, those fewer than
half of the node's ordinary turns call (``dskit bench rare`` writes it; tests/test_deferred.py checks
it on a new run of the turns). A turn that does call one compiles that function then: about what
compiling it with the script costs. This module only refuses what it could not defer without a
change of behaviour (:func:`refusal`): what the script runs when it starts, decorated functions,
methods that use ``super()`` or name mangling, special methods Python may need while building a
class, defaults that are not plain values (or read the class body), names used as anything but a
value (``f.attr``, rebinding, a class attribute), and text that cannot sit in a raw string.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Mapping, Sequence

from dskit.tooling.codegen.names import bound_names

DEFERRED_NAME = "_Deferred"
GROUP_NAME = "_defer"
LOADER = f'''class {DEFERRED_NAME}:
    """A function compiled on its first call. Most turns do not call it, so its source is kept as the
    text beside its name and compiled only when needed, in this script's namespace; then the function
    takes its name's place (on its class, for a method): the same function, the same results."""

    __slots__ = ("_name", "_source", "_owner", "_function")

    def __init__(self, name, source):
        self._name = name
        self._source = source
        self._owner = None
        self._function = None

    def __set_name__(self, owner, name):
        self._owner = owner

    def _load(self):
        if self._function is None:
            space = {{}}
            # exec of the text, not of compile(text): Python's first compile() call builds the classes of
            # its ast module, a sixth of the work of starting Python; exec(text) does without them.
            exec(self._source if self._owner is None else "if 1:" + self._source, globals(), space)
            function = space[self._name]
            if self._owner is None:
                globals()[self._name] = function
            else:
                function.__qualname__ = self._owner.__qualname__ + "." + self._name
                setattr(self._owner, self._name, function)
            self._function = function
        return self._function

    def __call__(self, *args, **kwargs):
        return self._load()(*args, **kwargs)

    def __get__(self, instance, owner=None):
        return self._load().__get__(instance, owner)


def {GROUP_NAME}(namespace, *texts):
    """Puts each text's function in ``namespace`` (``locals()``: the module's names, or a class body's) as a
    {DEFERRED_NAME}, under the name its ``def`` line gives. One call for functions that stand together: one
    statement for Python to parse instead of one each."""
    for text in texts:
        start = text.index("def ") + 4
        name = text[start:text.index("(", start)]
        namespace[name] = {DEFERRED_NAME}(name, text)'''

# Special methods Python looks up on the class when it needs them, through a descriptor's __get__ like
# any method: a deferred one is compiled on that lookup. Others (__new__, __getattr__, __set_name__,
# __init_subclass__, ...) are used while a class is built or before its instances exist: never deferred.
_LOOKED_UP = frozenset({"__init__", "__repr__", "__str__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                        "__ge__", "__hash__", "__len__", "__bool__", "__iter__", "__contains__", "__getitem__",
                        "__setattr__", "__delattr__"})
_BUILDERS = frozenset({"__init__", "__new__"})  # what calling a class runs
_BUILTIN_BASES = frozenset(name for name in dir(builtins) if isinstance(getattr(builtins, name), type)
                           and issubclass(getattr(builtins, name), BaseException)) | {"object"}


# ---------------------------------------------------------------- what can be deferred


def units(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef, ast.ClassDef | None]]:
    """Every top-level function (``name``) and every method of a top-level class (``Class.name``)."""
    found: dict[str, tuple[ast.FunctionDef, ast.ClassDef | None]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            found[stmt.name] = (stmt, None)
        elif isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                if isinstance(inner, ast.FunctionDef):
                    found[f"{stmt.name}.{inner.name}"] = (inner, stmt)
    return found


def unit_of(qualname: str, classes: Iterable[str]) -> str:
    """The unit a code object's ``co_qualname`` belongs to: ``f.<locals>.g`` -> ``f``, ``C.m`` -> ``C.m``,
    ``C`` (the class body) -> ``C``."""
    parts = qualname.split(".")
    if len(parts) > 1 and parts[0] in set(classes) and parts[1] != "<locals>":
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


class Bundle:
    """What :func:`refusal` needs to know about the whole bundle: its top-level statements, every
    module's tree and the source lines of each unit."""

    def __init__(self, trees: Sequence[ast.Module], sources: Sequence[str], future_annotations: bool) -> None:
        self.trees = list(trees)
        self.sources = list(sources)
        self.future_annotations = future_annotations
        self.bindings: dict[str, int] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.globals_declared: set[str] = set()
        self.attribute_of: set[str] = set()  # names used as ``name.attr``
        self.class_level: set[str] = set()  # names read directly in a class body
        self.units: dict[str, tuple[int, ast.FunctionDef, ast.ClassDef | None]] = {}
        for index, tree in enumerate(self.trees):
            for name, (function, owner) in units(tree).items():
                self.units.setdefault(name, (index, function, owner))
        for tree in self.trees:
            for stmt in tree.body:
                for name in _bound(stmt):
                    self.bindings[name] = self.bindings.get(name, 0) + 1
                if isinstance(stmt, ast.ClassDef):
                    self.classes[stmt.name] = stmt
            for node in ast.walk(tree):
                if isinstance(node, (ast.Global, ast.Nonlocal)):
                    self.globals_declared.update(node.names)
                elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    self.attribute_of.add(node.value.id)
                elif isinstance(node, ast.ClassDef):
                    for inner in node.body:
                        if not isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                            self.class_level |= {n.id for n in ast.walk(inner) if isinstance(n, ast.Name)}
                        else:
                            for expr in getattr(inner, "decorator_list", []) + _defaults(inner):
                                self.class_level |= {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}

        self.at_start = self._run_at_start()

    def _run_at_start(self) -> set[str]:
        """Functions and classes the script runs when it starts: what its module level calls (or hands to
        a call, ``sorted(x, key=f)``), decorators and defaults, then all that their bodies name (for a
        class called there: its ``__init__``/``__new__`` and its bases'). Compiling those on first
        call would save nothing."""
        names: set[str] = set()
        bodies: dict[str, list[ast.AST]] = {}
        for tree in self.trees:
            for stmt in tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    bodies[stmt.name] = list(stmt.body)
                    names |= _names(stmt.decorator_list + _defaults(stmt))
                elif isinstance(stmt, ast.ClassDef):
                    methods = [s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                    bodies[stmt.name] = list(stmt.bases) + [part for method in methods if method.name in _BUILDERS
                                                            for part in method.body]
                    names |= _names(stmt.decorator_list + [e for m in methods for e in m.decorator_list + _defaults(m)])
                    names |= _called(stmt.bases + [k.value for k in stmt.keywords]
                                     + [s for s in stmt.body if s not in methods])
                else:
                    names |= _called([stmt])
        todo = list(names)
        while todo:
            for inner in _names(bodies.pop(todo.pop(), [])):
                if inner not in names:
                    names.add(inner)
                    todo.append(inner)
        return names

    def unit(self, name: str) -> tuple[int, ast.FunctionDef, ast.ClassDef | None] | None:
        return self.units.get(name)


def _names(nodes: Iterable[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


def _called(nodes: Iterable[ast.AST]) -> set[str]:
    """Names inside the calls of some module-level code: called, or handed to what is called."""
    return {n.id for node in nodes for call in ast.walk(node) if isinstance(call, ast.Call)
            for n in ast.walk(call) if isinstance(n, ast.Name)}


def _bound(stmt: ast.stmt) -> list[str]:
    return bound_names(stmt)


def _defaults(function: ast.AST) -> list[ast.expr]:
    args = getattr(function, "args", None)
    if args is None:
        return []
    return list(args.defaults) + [d for d in args.kw_defaults if d is not None]


def refusal(bundle: Bundle, name: str) -> str:
    """Why ``name`` (a unit) cannot be deferred without a change of behaviour; "" when it can."""
    if not bundle.future_annotations:
        return "the bundle evaluates annotations (no `from __future__ import annotations`)"
    found = bundle.unit(name)
    if found is None:
        return "no such function in the bundle"
    index, function, owner = found
    if (owner is None and function.name in bundle.at_start) or \
            (owner is not None and owner.name in bundle.at_start and function.name in _BUILDERS):
        return "the script runs it when it starts (module level)"
    if function.decorator_list:
        return "decorated"
    for default in _defaults(function):
        if not _plain_value(default, bundle):
            return f"default `{ast.unparse(default)}` is not a plain value"
    text = unit_text(bundle.sources[index], function)
    if "'''" in text or text.rstrip("\n").endswith("\\"):
        return "its text cannot sit in a raw ''' string"
    if owner is None:
        if bundle.bindings.get(function.name, 0) != 1 or function.name in bundle.globals_declared:
            return "its name is bound more than once"
        if function.name in bundle.attribute_of:
            return "its name is used as `name.attribute`"
        if function.name in bundle.class_level:
            return "its name is read in a class body"
        return ""
    return _method_refusal(bundle, owner, function)


def _method_refusal(bundle: Bundle, owner: ast.ClassDef, function: ast.FunctionDef) -> str:
    if function.name.startswith("__") and function.name not in _LOOKED_UP:
        return "a special method Python may need before the class is complete, or a name-mangled one"
    if owner.decorator_list or owner.keywords:
        return "its class is decorated or has a metaclass"
    problem = _class_bases_problem(bundle, owner, set())
    if problem:
        return problem
    if sum(function.name in _bound(stmt) for stmt in owner.body) != 1:
        return "bound more than once in its class"
    for stmt in owner.body:
        if stmt is not function and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if function.name in {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}:
                return "read in its class body"
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id in ("super", "__class__"):
            return f"uses `{node.id}` (needs its class when compiled)"
        for text in _identifiers(node):
            if text.startswith("__") and not text.endswith("__"):
                return f"uses `{text}` (a name its class would mangle)"
    in_class = {n for stmt in owner.body for n in _bound(stmt)}
    for default in _defaults(function):
        names = {n.id for n in ast.walk(default) if isinstance(n, ast.Name)} & in_class
        if names:
            return f"a default reads `{sorted(names)[0]}` from its class body"
    return ""


def _class_bases_problem(bundle: Bundle, owner: ast.ClassDef, seen: set[str]) -> str:
    seen.add(owner.name)
    for base in owner.bases:
        if not isinstance(base, ast.Name):
            return "its class has a computed base"
        if base.id in _BUILTIN_BASES:
            continue
        parent = bundle.classes.get(base.id)
        if parent is None:
            return f"its class derives from `{base.id}` (Enum, TypedDict, ...)"
        if parent.decorator_list or parent.keywords:
            return f"its class derives from `{base.id}`, decorated or with a metaclass"
        if base.id not in seen:
            problem = _class_bases_problem(bundle, parent, seen)
            if problem:
                return problem
    return ""


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    return []


_PLAIN_CALLS = frozenset({"frozenset", "tuple", "set", "list", "dict", "str", "int", "float", "bool", "bytes"})


def _plain_value(node: ast.expr, bundle: Bundle) -> bool:
    """A default that evaluates to the same whenever it is evaluated: a constant, a name bound once at
    module level (or a builtin), attributes of those, containers of them, and builtin constructors
    (``frozenset()``) of them."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        if node.id in bundle.globals_declared:
            return False
        return bundle.bindings.get(node.id, 0) == 1 or (node.id not in bundle.bindings and hasattr(builtins, node.id))
    if isinstance(node, ast.Attribute):
        return _plain_value(node.value, bundle)
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_plain_value(e, bundle) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _plain_value(k, bundle) for k in node.keys) and \
            all(_plain_value(v, bundle) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _PLAIN_CALLS \
            and node.func.id not in bundle.bindings and node.func.id not in bundle.globals_declared:
        return all(_plain_value(a, bundle) for a in node.args) and not node.keywords
    return False


# ---------------------------------------------------------------- writing it out


def unit_text(source: str, function: ast.FunctionDef) -> str:
    """The function's lines as they stand in ``source`` (decorators would come first; none are allowed)."""
    lines = source.splitlines(keepends=True)
    return "".join(lines[function.lineno - 1:function.end_lineno or function.lineno])


def defer_units(source: str, names: Iterable[str]) -> str:
    """``source`` with each named unit (top-level function or ``Class.method``) of this module written
    as ``name = _Deferred("name", r'''<its lines>''')`` in place."""
    tree = ast.parse(source)
    found = units(tree)
    lines = source.splitlines(keepends=True)
    edits = []
    for name in names:
        function, owner = found[name]
        first, last = function.lineno, function.end_lineno or function.lineno
        indent = " " * function.col_offset
        text = "".join(lines[first - 1:last])
        if not text.endswith("\n"):
            text += "\n"
        edits.append((first, last, f"{indent}{function.name} = {DEFERRED_NAME}({function.name!r}, r'''\n{text}"
                                   f"{indent}''')\n"))
    for first, last, text in sorted(edits, reverse=True):
        lines[first - 1:last] = [text]
    return "".join(lines)


def _single(stmt: ast.stmt) -> ast.Constant | None:
    """The text of ``name = _Deferred("name", "text")`` (as :func:`defer_units` writes it), else None."""
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == DEFERRED_NAME \
            and len(stmt.value.args) == 2 and isinstance(stmt.value.args[1], ast.Constant) \
            and isinstance(stmt.value.args[1].value, str):
        return stmt.value.args[1]
    return None


def _grouped(stmt: ast.stmt) -> list[ast.Constant] | None:
    """The texts of ``_defer(locals(), "text", ...)`` (as :func:`group` writes it), else None."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name) \
            and stmt.value.func.id == GROUP_NAME and stmt.value.args and not stmt.value.keywords:
        first, *texts = stmt.value.args
        if isinstance(first, ast.Call) and isinstance(first.func, ast.Name) and first.func.id == "locals" \
                and texts and all(isinstance(t, ast.Constant) and isinstance(t.value, str) for t in texts):
            return texts  # type: ignore[return-value]
    return None


def defined_name(text: str) -> str:
    """The name a deferred text defines, read as :data:`GROUP_NAME` reads it at run time: its ``def`` line."""
    start = text.find("def ") + 4
    return text[start:text.find("(", start)] if start >= 4 and "(" in text[start:] else ""


def deferred_sources(tree: ast.Module) -> dict[str, str]:
    """``{name: source}`` of every deferred text in a bundled script, written singly or grouped, at any
    depth (methods sit in their classes), keyed ``Class.name`` for methods."""
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for stmt in body:
            if isinstance(stmt, ast.ClassDef):
                visit(stmt.body, f"{stmt.name}.")
            elif (single := _single(stmt)) is not None:
                found[prefix + str(stmt.value.args[0].value)] = single.value  # type: ignore[attr-defined]
            else:
                for text in _grouped(stmt) or ():
                    found[prefix + defined_name(text.value)] = text.value

    visit(tree.body, "")
    return found


def group(script: str) -> str:
    """``script`` with each run of ``name = _Deferred("name", r'''...''')`` statements that stand next to
    each other in one body (the module's, or a class's; only blank lines and comments between them)
    written as one ``_defer(locals(), r'''...''', ...)``: the texts, and what stands between them,
    unchanged and in place. Why: Python parses and compiles each statement of the script on every run,
    and one of these costs as much as 600 bytes of text; a call takes any number of texts."""
    tree = ast.parse(script)
    lines = script.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(lineno: int, col: int) -> int:  # ast columns count UTF-8 bytes
        return starts[lineno - 1] + len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8"))

    runs: list[list[ast.stmt]] = []

    def visit(body: list[ast.stmt]) -> None:
        run: list[ast.stmt] = []
        for stmt in [*body, None]:
            if stmt is not None and _single(stmt) is not None:
                run.append(stmt)
                continue
            if run:
                runs.append(run)
                run = []
            if isinstance(stmt, ast.ClassDef):
                visit(stmt.body)

    visit(tree.body)
    edits = []
    for run in runs:
        parts = [f"{GROUP_NAME}(locals(), "]
        for index, stmt in enumerate(run):
            text = _single(stmt)
            parts.append(script[offset(text.lineno, text.col_offset):offset(text.end_lineno, text.end_col_offset)])
            if index + 1 < len(run):
                following = run[index + 1]
                parts.append("," + script[offset(stmt.end_lineno, stmt.end_col_offset):
                                          offset(following.lineno, following.col_offset)])
        parts.append(")")
        edits.append((offset(run[0].lineno, run[0].col_offset), offset(run[-1].end_lineno, run[-1].end_col_offset),
                       "".join(parts)))
    for begin, end, text in sorted(edits, reverse=True):
        script = script[:begin] + text + script[end:]
    return script


def _normal(text: str) -> str:
    """A text as the bundle's layout leaves it (trailing spaces and runs of blank lines do not count)."""
    lines = [line.rstrip() for line in text.strip("\n").splitlines()]
    return re.sub(r"\n{4,}", "\n\n\n", "\n".join(lines)).strip()


def check_deferred(script: str, expected: Mapping[str, str]) -> list[str]:
    """Problems with the deferred texts of a finished script: each must be exactly the unit's text
    ``expected`` (from the plain bundle) and define exactly that name."""
    tree = ast.parse(script)
    found = deferred_sources(tree)
    problems = []
    if set(found) != set(expected):
        problems.append(f"deferred {sorted(found)} != wanted {sorted(expected)}")
    for name, text in found.items():
        short = name.rpartition(".")[2]
        body = ("if 1:" + text) if "." in name else text
        try:
            parsed = ast.parse(body)
        except SyntaxError as error:
            problems.append(f"{name}: its text does not compile ({error.msg})")
            continue
        inner = parsed.body[0].body if "." in name else parsed.body
        if len(inner) != 1 or not isinstance(inner[0], ast.FunctionDef) or inner[0].name != short:
            problems.append(f"{name}: its text does not define exactly `{short}`")
        if name in expected and _normal(text) != _normal(expected[name]):
            problems.append(f"{name}: its text differs from the function's")
    return problems


# ---------------------------------------------------------------- what a run compiles


def deferred_text_bytes(script: str) -> dict[str, int]:
    """UTF-8 bytes of each deferred unit's text in a bundled script."""
    return {name: len(text.encode("utf-8")) for name, text in deferred_sources(ast.parse(script)).items()}


def eager_bytes(script: str) -> int:
    """Bytes of a script Python compiles as code when it runs: all of it but the deferred texts."""
    return len(script.encode("utf-8")) - sum(deferred_text_bytes(script).values())


def deferred_objects(namespace: Mapping[str, object]) -> dict[str, object]:
    """The loaders still in a script's namespace (``name`` / ``Class.name``): take them before ``main``
    runs, then :func:`loaded` tells which of them it compiled."""
    loader = namespace.get(DEFERRED_NAME)
    if not isinstance(loader, type):
        return {}
    found: dict[str, object] = {}
    for key, value in list(namespace.items()):
        if isinstance(value, loader):
            found[key] = value
        elif isinstance(value, type) and value.__module__ == namespace.get("__name__"):
            for attribute, inner in vars(value).items():
                if isinstance(inner, loader):
                    found[f"{key}.{attribute}"] = inner
    return found


def loaded(objects: Mapping[str, object]) -> set[str]:
    """Which of :func:`deferred_objects` have been compiled since they were taken."""
    return {name for name, value in objects.items() if getattr(value, "_function", None) is not None}
