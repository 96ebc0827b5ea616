"""The engine keeps the shape docs/design.md promises: small rooms, no import cycles.

A class over 300 lines or a function over 80 is where rules start to hide from each other (the old
``_MachineTurn`` was 778 lines and about 65 methods); an import cycle means two modules cannot be read
(or bundled into a code node) one after the other. These limits are checked on the source, so a new
module is held to them without being listed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dskit.tooling.codegen.pythons import in_a_stdlib

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "dskit"
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 80


def _engine_files() -> list[Path]:
    return sorted(p for p in ENGINE.rglob("*.py")
                  if "tooling" not in p.relative_to(ENGINE).parts and p.name not in ("__init__.py", "__main__.py"))


def _sizes(path: Path) -> list[tuple[str, str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            found.append((kind, f"{path.name}:{node.name}", node.end_lineno - node.lineno + 1))
    return found


def test_no_engine_class_or_function_is_too_long():
    too_long = [(kind, name, lines) for path in _engine_files() for kind, name, lines in _sizes(path)
                if lines > (MAX_CLASS_LINES if kind == "class" else MAX_FUNCTION_LINES)]
    assert too_long == [], too_long


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path, package: str) -> set[str]:
    """The dskit modules ``path`` imports anywhere (module level or inside a function), except under
    ``if TYPE_CHECKING:`` (never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = package.split(".")
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _is_type_checking(node):
            return
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here[: len(here) - node.level + 1] + ([base] if base else [])
                base = ".".join(parts)
            if base.startswith("dskit"):
                for alias in node.names:  # "from . import x" imports a module, "from .x import y" a name
                    found.add(f"{base}.{alias.name}" if not node.module else base)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("dskit"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _module_graph() -> dict[str, set[str]]:
    modules: dict[str, Path] = {}
    for path in ENGINE.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        modules[name] = path
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for target in _imports(path, package):
            while target and target not in modules:  # "dskit.tooling.llm.client.LLMClient" -> the module
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                targets.add(target)
        graph[name] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


# What each part of the engine may import (the opening docstring of dskit/<part>/__init__.py says the same
# in words): a part sits above the parts it imports. The one reach upward is declared by module: a rule
# judges a proposed effect and the turn it would join, so rules may read turn/effects.py and turn/turn.py.
PART_IMPORTS = {
    "base": set(),
    "catalog": {"base"},
    "state": {"base", "catalog"},
    "rules": {"base", "catalog", "state", "turn.effects", "turn.turn"},
    "turn": {"base", "catalog", "state", "rules"},
    "context": {"base", "catalog", "state", "rules", "turn"},
    "surfaces": {"base", "catalog", "state", "rules", "turn", "context"},
}


def _part_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports from one engine part into another that PART_IMPORTS does not allow ("dskit.<part>.<module>")."""
    found = []
    for name, targets in sorted(graph.items()):
        parts = name.split(".")
        if len(parts) != 3 or parts[1] == "tooling":
            continue
        for target in sorted(targets):
            other = target.split(".")
            if len(other) < 2 or other[1] in ("tooling", parts[1]) or other[0] != "dskit":
                continue
            allowed = PART_IMPORTS.get(parts[1], set())
            if other[1] not in allowed and ".".join(other[1:3]) not in allowed:
                found.append(f"{name} imports {target}")
    return found


def test_every_engine_module_sits_in_a_part_that_says_what_it_holds_and_may_import():
    loose = [p.name for p in _engine_files() if p.parent == ENGINE]
    assert loose == [], f"engine modules outside a part folder: {loose}"
    assert {p.parent.name for p in _engine_files()} == set(PART_IMPORTS)
    for part in PART_IMPORTS:
        doc = ast.get_docstring(ast.parse((ENGINE / part / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert "Holds:" in doc and "May import:" in doc, part


def test_each_part_imports_only_what_it_may():
    assert _part_violations(_module_graph()) == []


def test_the_part_check_finds_an_import_upward():
    graph = {"dskit.base.text": {"dskit.turn.commands"}, "dskit.rules.admission": {"dskit.turn.effects"},
             "dskit.rules.cues": {"dskit.turn.reducer"}, "dskit.surfaces.nodes": {"dskit.turn.machine"}}
    assert _part_violations(graph) == ["dskit.base.text imports dskit.turn.commands",
                                       "dskit.rules.cues imports dskit.turn.reducer"]


def test_no_import_cycle_in_dskit():
    """Engine and tooling alike, lazy imports included (a cycle hidden by a lazy import is still one)."""
    assert _cycles(_module_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", [str(p.relative_to(ENGINE).with_suffix("")) for p in _engine_files()])
def test_engine_modules_import_only_the_standard_library_and_the_engine(module):
    """The engine is what code nodes bundle: it imports the standard library and itself, nothing else."""
    import sys

    tree = ast.parse((ENGINE / f"{module}.py").read_text(encoding="utf-8"))
    outside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            outside |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            outside.add((node.module or "").split(".")[0])
    # a module only the sandbox's 3.10 has (_sha256) counts: it is tried only where ImportError falls back
    assert {name for name in outside - {"__future__"} if not in_a_stdlib(name)} == set()


def _module_level_bindings(path: Path) -> list[str]:
    """Names a module binds at its top level with ``=``, ``def`` or ``class`` (imports aside)."""
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def test_no_engine_module_binds_a_name_twice():
    # A second binding silently replaces the first for every function that reads the name at call
    # time: cues.py once had two different _A_NOT_A patterns, and its question test used the later one.
    twice = [(path.name, name) for path in _engine_files() for name in _module_level_bindings(path)
             if _module_level_bindings(path).count(name) > 1]
    assert twice == [], sorted(set(twice))


# ---------------------------------------------------------------- the turn's shape (issue 38)

MAX_TURN_ATTRIBUTES = 12
# Every key a task record may carry (dskit.state.records.TASK_KEYS): written by dskit.state.taskstack.TaskStack only.
TASK_WRITERS = {"taskstack.py"}
# The loader builds a task record from the text it reads (dskit.state.state._repair_stack): construction, not a change.
TASK_BUILDERS = {("state.py", "_repair_stack")}


def _attributes_set_in_init(path: Path, class_name: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    return {t.attr for n in ast.walk(init) if isinstance(n, (ast.Assign, ast.AnnAssign))
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"}


def test_a_turn_keeps_no_flag_bag():
    """What a turn did is read off its ledger of effects (dskit.turn.turn.Ledger), not kept in flags beside it."""
    names = _attributes_set_in_init(_engine_path("turn.py"), "Turn")
    assert len(names) <= MAX_TURN_ATTRIBUTES, sorted(names)


def _engine_path(name: str) -> Path:
    return next(p for p in ENGINE.rglob(name) if "tooling" not in p.parts)


def _value_chain(node: ast.AST) -> list[ast.AST]:
    """``a["slots"][n]`` -> the subscripts along its value chain (not inside arguments)."""
    chain = []
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        chain.append(node)
        node = node.value
    return chain


def task_writes(source: str) -> list[tuple[str, int, str]]:
    """(function, line, code) of every write to a task key outside the allowed writers: an assignment or
    deletion through ``x["slots"]``-like subscripts, ``x.pop("shown")``-like calls, and calls that change a
    task key's container in place (``x["history"].setdefault(...)``)."""
    from dskit.state.records import TASK_KEYS

    def is_key(node: ast.AST) -> bool:
        return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and node.slice.value in TASK_KEYS

    found = []
    tree = ast.parse(source)
    for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for node in ast.walk(function):
            targets: list[ast.AST] = []
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            hit = any(is_key(link) for target in targets for link in _value_chain(target))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                method, owner = node.func.attr, node.func.value
                if method in ("pop", "setdefault") and node.args and isinstance(node.args[0], ast.Constant) \
                        and node.args[0].value in TASK_KEYS and isinstance(owner, ast.Name) \
                        and owner.id in ("task", "top", "sub", "child", "parent", "clean"):
                    hit = True
                if method in ("pop", "setdefault", "update", "clear", "append", "extend", "remove") \
                        and any(is_key(link) for link in _value_chain(owner)):
                    hit = True
            if hit:
                found.append((function.name, node.lineno, ast.unparse(node)[:80]))
    return found


def test_no_task_is_written_outside_the_task_stack():
    """TaskStack is the only code that changes a task (issue 38): its slot values and old values, its
    stage, its parent, what a question showed. The loader that builds a record from text is the exception."""
    offenders = []
    for path in _engine_files():
        if path.name in TASK_WRITERS:
            continue
        offenders += [(path.name, *hit) for hit in task_writes(path.read_text(encoding="utf-8"))
                      if (path.name, hit[0]) not in TASK_BUILDERS]
    assert offenders == []


def test_the_task_write_check_finds_a_write():
    source = ("def f(task, turn):\n    task['shown'] = 'x'\n    del task['slots']['a']\n"
              "    task.pop('approved', None)\n    task['history'].setdefault('b', [])\n"
              "    turn.changed[task['id']] = 1\n")
    assert [line for _, line, _ in task_writes(source)] == [2, 3, 4, 5]


def _command_words() -> set[str]:
    from dskit.turn.commands import COMMAND_ALIASES, COMMAND_TYPES

    return set(COMMAND_TYPES) | set(COMMAND_ALIASES)


_COMMAND_WORDS = _command_words()


def command_type_comparisons(source: str) -> list[tuple[int, str]]:
    """Comparisons of a command's type as a string: ``c["type"] == "confirm"``, ``c.get("type") in (...)``,
    ``c.kind == "faq"``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        typed = any((isinstance(s, ast.Subscript) and isinstance(s.slice, ast.Constant) and s.slice.value == "type")
                    or (isinstance(s, ast.Call) and isinstance(s.func, ast.Attribute) and s.func.attr == "get"
                        and s.args and isinstance(s.args[0], ast.Constant) and s.args[0].value == "type")
                    or (isinstance(s, ast.Attribute) and s.attr == "kind") for s in sides)
        literal = any(isinstance(c, ast.Constant) and c.value in _COMMAND_WORDS for s in sides for c in ast.walk(s))
        if typed and literal:
            found.append((node.lineno, ast.unparse(node)[:80]))
    return found


def test_no_command_type_is_compared_as_a_string_outside_the_commands():
    """A command is a typed value: code outside dskit/turn/commands.py tells commands apart by their class."""
    offenders = [(path.name, *hit) for path in _engine_files() if path.name != "commands.py"
                 for hit in command_type_comparisons(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_the_command_type_check_finds_a_comparison():
    assert len(command_type_comparisons("x = c['type'] == 'confirm' or c.kind in ('faq',) or "
                                        "c.get('type') != 'deny'")) == 3
