"""The bundler's cold-start rewrites (dskit/tooling/codegen/lean.py) change no result (issue 9, item 7).

Dify runs each code node in a fresh interpreter, so the bundle leaves out names only annotations
mention, writes plain dataclasses out (no ``import dataclasses``) and compiles module-level regular
expressions on first use. Each rewrite is checked against the original: the lean and the plain
bundle of every node return the same outputs, the written-out classes behave like the dataclasses
they replace, and a pattern compiled later matches the same. Times are not asserted here; ``dskit
bench nodes --cold`` prints them.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dskit.tooling.bench.code_nodes import bench_inputs, typical_inputs
from dskit.tooling.codegen.bundle import MainParam, bundle, engine_module, engine_paths
from dskit.tooling.codegen.code_nodes import node_script
from dskit.tooling.codegen.lean import LAZY_NAME, expand_dataclasses
from dskit.tooling.codegen.nodespecs import NODE_SPECS
from dskit.tooling.codegen.sandbox import check_source, main_in_process

pytestmark = pytest.mark.slow  # generation, graphon runs or recorded-model replays: `-m "not slow"` skips them

ENGINE = Path(__file__).resolve().parents[1] / "dskit"


@pytest.fixture(scope="module")
def lean_mains() -> dict[str, Any]:
    return {spec.name: main_in_process(node_script(spec), f"lean_{spec.name}") for spec in NODE_SPECS}


@pytest.fixture(scope="module")
def plain_mains() -> dict[str, Any]:
    from dskit.tooling.codegen.code_nodes import node_header

    def plain(spec: Any) -> str:
        params = [MainParam(i.name, i.annotation, i.default) for i in spec.inputs] + [
            MainParam(s.name, s.annotation, s.default) for s in spec.settings]  # as dskit gen writes main()
        return bundle(spec.entry, params, header=node_header(spec), pass_extra=spec.pass_extra, lean=False)

    return {spec.name: main_in_process(plain(spec), f"plain_{spec.name}") for spec in NODE_SPECS}


def _cases(mains: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    typical, heavy = typical_inputs(mains), bench_inputs(mains)
    out = []
    for spec in NODE_SPECS:
        out += [(spec.name, typical.get(spec.name, {})), (spec.name, heavy.get(spec.name, {})), (spec.name, {})]
        out.append((spec.name, {i.name: "{not json" for i in spec.inputs}))
    return out


def test_lean_and_plain_bundles_return_the_same(lean_mains: dict, plain_mains: dict) -> None:
    for name, inputs in _cases(plain_mains):
        assert lean_mains[name](**inputs) == plain_mains[name](**inputs), name


def test_every_node_is_standard_library_without_dataclasses_or_annotation_imports() -> None:
    for spec in NODE_SPECS:
        code = node_script(spec)
        assert check_source(code) == [], spec.name
        tree = ast.parse(code)
        imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
        imported |= {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
        assert "dataclass" not in imported and "dataclasses" not in imported, spec.name
        assert "Any" not in imported, spec.name  # it only ever annotates


def test_each_node_leaves_out_the_engine_it_does_not_reach() -> None:
    """Sizes: a node carries its own part of the engine, not the rest (figures: bench nodes --cold)."""
    scripts = {spec.name: node_script(spec) for spec in NODE_SPECS}
    assert "def state_node" not in scripts["history"] and "class _MachineTurn" not in scripts["history"]
    assert "def estimate_tokens" not in scripts["result"]  # the state node keeps the memory too: it has both
    assert "def context_node" not in scripts["state"] and "def summary_node" not in scripts["state"]
    from dskit.tooling.codegen.bundle import module_order

    for spec in NODE_SPECS:  # every node is a part of the modules it imports, header and all
        closure = sum(len(m.source.encode()) for m in module_order(spec.entry.partition(":")[0].split(".")[-1]))
        assert len(scripts[spec.name].encode()) < closure, spec.name
    assert len(scripts["result"].encode()) < len(scripts["state"].encode()) / 3


# ---------------------------------------------------------------- dataclasses written out


def _engine_dataclasses() -> list[tuple[str, str]]:
    found = []
    for path in engine_paths(ENGINE).values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list):
                found.append((path.stem, node.name))
    return found


def _expanded(module: str, name: str) -> type | None:
    """The class as a bundle carries it (taken from the first node that has it), else None."""
    for spec in NODE_SPECS:
        main = main_in_process(node_script(spec), f"classes_{spec.name}")
        cls = main.__globals__.get(name)
        if isinstance(cls, type):
            return cls
    return None


def _sample(cls: type, original: type) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for index, field in enumerate(dataclasses.fields(original)):
        values[field.name] = f"v{index}" if field.type in ("str", str) else (index,)
    return values


@pytest.mark.parametrize(("module", "name"), _engine_dataclasses())
def test_a_written_out_dataclass_behaves_like_the_original(module: str, name: str) -> None:
    original = getattr(importlib.import_module(engine_module(module)), name)
    lean = _expanded(module, name)
    if lean is None:
        pytest.skip(f"{name} is in no node")
    if dataclasses.is_dataclass(lean):
        pytest.skip(f"{name} keeps its decorator (not a plain dataclass)")
    fields = dataclasses.fields(original)
    assert lean.__match_args__ == original.__match_args__
    required = {f.name: f"r{i}" for i, f in enumerate(fields)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    a, b = original(**required), lean(**required)
    assert repr(b) == repr(a).replace(original.__qualname__, lean.__qualname__)
    for field in fields:
        assert getattr(b, field.name) == getattr(a, field.name)
        assert hasattr(lean, field.name) == hasattr(original, field.name)  # class attributes as @dataclass
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        other = lean(**required)
        assert all(getattr(other, f.name) is not getattr(b, f.name) for f in fields
                   if f.default_factory is not dataclasses.MISSING)
    full = _sample(lean, original)
    x, y = original(**full), lean(**full)
    positional = lean(*full.values())
    assert positional == y == lean(**full) and y != b and (y == x) is False  # equal only to its own class
    assert repr(y) == repr(x).replace(original.__qualname__, lean.__qualname__)
    frozen = original.__dataclass_params__.frozen
    if frozen:
        assert hash(y) == hash(lean(**full)) == hash(tuple(full.values()))
        name0 = fields[0].name
        for attempt in (lambda: setattr(y, name0, 1), lambda: delattr(y, name0)):
            with pytest.raises(AttributeError) as lean_error:
                attempt()
            with pytest.raises(dataclasses.FrozenInstanceError) as original_error:
                (lambda: setattr(x, name0, 1) if attempt.__code__.co_names[0] == "setattr" else delattr(x, name0))()
            assert str(lean_error.value) == str(original_error.value)
    else:
        assert lean.__hash__ is None


def test_a_dataclass_the_expansion_cannot_reproduce_keeps_its_decorator() -> None:
    source = textwrap.dedent('''
        from dataclasses import dataclass, field

        @dataclass(order=True)
        class Ordered:
            a: int

        @dataclass
        class WithOptions:
            a: list = field(default_factory=list, repr=False)

        @dataclass(frozen=True)
        class Plain:
            a: int
            b: list = field(default_factory=list)
    ''')
    out = expand_dataclasses(source)
    decorated = [line for line in out.splitlines() if line.startswith("@dataclass")]
    assert decorated == ["@dataclass(order=True)", "@dataclass"]
    assert "class Plain:" in out and "def __init__(self, a, b=" in out


# ---------------------------------------------------------------- patterns compiled on first use


def _demo_bundle(tmp_path: Path, source: str) -> str:
    package = tmp_path / "demo"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "entry.py").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return bundle("entry:entry_node", [MainParam("text")], package_dir=package, package="demo")


def test_only_patterns_used_as_pattern_methods_wait_for_their_first_use(tmp_path: Path) -> None:
    code = _demo_bundle(tmp_path, '''
        from __future__ import annotations

        import re

        WORD = re.compile(r"\\w+")
        SPACE = re.compile(r"\\s+", re.S)
        PASSED = re.compile(r"x")


        def entry_node(text: str = "") -> dict:
            return {"words": WORD.findall(text), "n": len(re.findall(PASSED, text)),
                    "parts": SPACE.split(text)}
    ''')
    assert f"WORD = {LAZY_NAME}('WORD', r\"\\w+\")" in code and f"SPACE = {LAZY_NAME}('SPACE'" in code
    assert 'PASSED = re.compile(r"x")' in code  # handed to re.findall: must stay a real pattern
    main = main_in_process(code, "lazy_demo")
    module = main.__globals__
    assert type(module["WORD"]).__name__ == LAZY_NAME
    assert main(text="ax b  c") == {"words": ["ax", "b", "c"], "n": 1, "parts": ["ax", "b", "c"]}
    assert isinstance(module["WORD"], re.Pattern) and module["WORD"].flags == re.compile(r"\w+").flags
    assert module["SPACE"].flags & re.S


def test_the_engine_patterns_deferred_in_a_node_match_the_originals(lean_mains: dict) -> None:
    module = lean_mains["state"].__globals__
    lazy = {name: value for name, value in module.items() if type(value).__name__ == LAZY_NAME}
    assert lazy  # the state node defers some
    for name, proxy in lazy.items():
        args = object.__getattribute__(proxy, "_args")
        compiled = re.compile(*args)
        assert proxy.pattern == compiled.pattern and proxy.flags == compiled.flags, name
        assert module[name] is not proxy and isinstance(module[name], re.Pattern)


def test_names_only_annotations_mention_are_left_out(tmp_path: Path) -> None:
    code = _demo_bundle(tmp_path, '''
        from __future__ import annotations

        from typing import Any, TypedDict


        class OnlyAnnotates(TypedDict):
            a: int


        class UsedAtRunTime(TypedDict):
            b: int


        KINDS = [UsedAtRunTime]  # a value: a written-out class could not stand in for it


        def entry_node(text: Any = "") -> OnlyAnnotates:
            x: OnlyAnnotates = {"a": 1}
            return {"keys": sorted(KINDS[0].__annotations__), "x": json_safe(x)}


        def json_safe(value: dict[str, Any]) -> str:
            return str(value)
    ''')
    assert "class OnlyAnnotates" not in code and "class UsedAtRunTime" in code
    assert "from typing import TypedDict\n" in code
    assert main_in_process(code, "annotations_demo")(text="") == {"keys": ["b"], "x": "{'a': 1}"}
    json.dumps(main_in_process(code, "annotations_demo2")())


# ---------------------------------------------------------------- TypedDicts written out


def test_a_typed_dict_used_only_for_its_keys_is_written_out_without_typing(tmp_path: Path) -> None:
    code = _demo_bundle(tmp_path, '''
        from __future__ import annotations

        from typing import Any, TypedDict


        class Base(TypedDict, total=False):
            """Optional keys."""

            error: str


        class Record(Base):
            name: str
            count: int | None


        def entry_node(text: Any = "") -> Record:
            record = Record(name=text, count=None)
            return {"type": type(record).__name__, "keys": list(Record.__annotations__), "record": record,
                    "required": sorted(Record.__required_keys__), "optional": sorted(Record.__optional_keys__),
                    "total": [Record.__total__, Base.__total__], "base": sorted(Base.__annotations__)}
    ''')
    assert "import typing" not in code and "from typing" not in code
    assert "class Record(dict):" in code and "class Base(dict):" in code
    got = main_in_process(code, "typed_demo")(text="x")
    namespace: dict[str, Any] = {}
    source = (tmp_path / "demo" / "entry.py").read_text(encoding="utf-8")
    exec(compile(source, "entry.py", "exec"), namespace)  # noqa: S102 - the test's own source
    assert got == namespace["entry_node"](text="x")
    assert got["keys"] == ["error", "name", "count"] and got["type"] == "dict"


def test_the_engine_typed_dicts_a_node_writes_out_list_the_same_keys(lean_mains: dict) -> None:
    from dskit.state import records

    checked = 0
    for main in lean_mains.values():
        for name, value in main.__globals__.items():
            original = getattr(records, name, None)
            if not isinstance(value, type) or not isinstance(original, type) or value is original \
                    or "__required_keys__" not in vars(original):
                continue
            assert list(value.__annotations__) == list(original.__annotations__), name
            assert {k: v.__forward_arg__ for k, v in original.__annotations__.items()} == value.__annotations__
            for attribute in ("__required_keys__", "__optional_keys__", "__total__"):
                assert getattr(value, attribute) == getattr(original, attribute), (name, attribute)
            assert type(value(a=1)) is dict and value(a=1) == original(a=1)
            checked += 1
    assert checked  # the state node writes Decision out


# ---------------------------------------------------------------- type hints and word tables (issue 22)

HINTED = '''
from __future__ import annotations

from typing import Any

LIMIT: int = 3


class Fields:
    __slots__ = ()
    name: str
    size: int = 2


def plain(a: int, b: str = "é", /, c: list[int] | None = None, *rest: Any, d: "Fields" = None,
          e: dict[str,
                  int] = {}, **extra: Any) -> dict[
        str, Any]:  # a comment -> kept
    total: int = a + len(rest)
    note: str
    note = f"{b}{c}{d}{e}{extra}"
    def inner(x: float = 1.5) -> float:
        y: float = x * 2
        return y
    return {"total": total, "note": note, "inner": inner(), "lam": (lambda q=2: q)()}


async def later(x: int) -> int:
    return x
'''


def test_function_hints_are_left_out_and_nothing_else_changes() -> None:
    import inspect

    from dskit.tooling.codegen.lean import without_function_hints

    lean = without_function_hints(textwrap.dedent(HINTED))
    tree = ast.parse(lean)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert len(functions) == 3
    for function in functions:
        args = function.args
        assert function.returns is None
        assert all(a.annotation is None for a in args.posonlyargs + args.args + args.kwonlyargs
                   + [args.vararg, args.kwarg] if a is not None)
        assert not [n for n in ast.walk(function) if isinstance(n, ast.AnnAssign) and n.value is not None]
    assert "note: str" in lean  # a bare local annotation makes a name local: kept
    assert "# a comment -> kept" in lean
    original, rewritten = {}, {}
    exec(compile(textwrap.dedent(HINTED), "hinted", "exec"), original)  # noqa: S102 - our own test source
    exec(compile(lean, "lean", "exec"), rewritten)  # noqa: S102
    assert rewritten["Fields"].__annotations__ == original["Fields"].__annotations__  # class fields stay
    assert rewritten["LIMIT"] == 3 and "LIMIT" in rewritten["__annotations__"]  # module level stays
    for name in ("plain", "later"):
        before, after = inspect.signature(original[name]), inspect.signature(rewritten[name])
        assert [(p.name, p.kind, p.default) for p in before.parameters.values()] == \
               [(p.name, p.kind, p.default) for p in after.parameters.values()]
    assert rewritten["plain"](1, "x", [2], 3, d=4, z=5) == original["plain"](1, "x", [2], 3, d=4, z=5)


def test_word_tables_become_one_string_with_the_same_values() -> None:
    from dskit.tooling.codegen.lean import TABLE_MIN_WORDS, word_tables_as_text

    source = textwrap.dedent('''
        WORDS = ("好", "好的", "可以", "行", "对", "嗯", "是的", "没错", "好的")
        PIPES = ("a|b", "c", "d", "e", "f", "g", "h", "i")
        EVERY = ("|", " ", ",", "/", ";", "#", "\\t", "x")
        SHORT = ("a", "b", "c")
        MIXED = ("a", "b", "c", "d", "e", "f", "g", 8)
        SET = {"a", "b", "c", "d", "e", "f", "g", "h", ""}
        FROZEN = frozenset(["新\\n行", "b", "c", "d", "e", "f", "g", "h"])
        LIST = ["'", '"', "\\\\", "d", "e", "f", "g", "h"]
        NESTED = {"k": ("a", "b", "c", "d", "e", "f", "g", "h")}
        LAZY = lambda: ("a", "b", "c", "d", "e", "f", "g", "h")
        BUILT = [w for w in ("a", "b", "c", "d", "e", "f", "g", "h")]


        class Holder:
            KEYS = ("a", "b", "c", "d", "e", "f", "g", "h")


        def inside():
            return ("a", "b", "c", "d", "e", "f", "g", "h")
    ''')
    lean = word_tables_as_text(source)
    original, rewritten = {}, {}
    exec(compile(source, "tables", "exec"), original)  # noqa: S102 - our own test source
    exec(compile(lean, "lean", "exec"), rewritten)  # noqa: S102
    for name in ("WORDS", "PIPES", "EVERY", "SHORT", "MIXED", "SET", "FROZEN", "LIST", "NESTED", "BUILT"):
        assert rewritten[name] == original[name] and type(rewritten[name]) is type(original[name]), name
    assert rewritten["Holder"].KEYS == original["Holder"].KEYS
    assert rewritten["LAZY"]() == original["LAZY"]() and rewritten["inside"]() == original["inside"]()
    rewritten_names = {line.split(" = ")[0].strip() for line in lean.splitlines() if ".split(" in line}
    assert rewritten_names == {"WORDS", "PIPES", "SET", "FROZEN", "LIST", "NESTED", "KEYS"}
    assert "'a|b c d e f g h i'.split(' ')" in lean  # a word holding the separator: the next one
    assert TABLE_MIN_WORDS > len(original["SHORT"])


def test_every_engine_table_written_as_text_keeps_its_value() -> None:
    from dskit.tooling.codegen.lean import word_tables_as_text, without_function_hints

    builtins = {"__builtins__": {"tuple": tuple, "set": set, "frozenset": frozenset}}

    def split_calls(tree: ast.AST) -> list[ast.expr]:
        """The rewritten tables: ``'...'.split(sep)``, with the call around it that gives its type."""
        found, wrapped = [], set()
        for node in ast.walk(tree):
            if id(node) in wrapped:
                continue
            inner = node.args[0] if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("tuple", "set", "frozenset") and len(node.args) == 1 else node
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "split" \
                    and isinstance(inner.func.value, ast.Constant):
                found.append(node)
                wrapped.add(id(inner))
        return found

    rewritten_tables = 0
    for path in engine_paths(ENGINE).values():
        source = path.read_text(encoding="utf-8")
        lean = word_tables_as_text(without_function_hints(source))
        before, after = ast.parse(source), ast.parse(lean)
        assert [type(n).__name__ for n in before.body] == [type(n).__name__ for n in after.body], path.name
        for old_stmt, new_stmt in zip(before.body, after.body):
            if ast.dump(old_stmt) == ast.dump(new_stmt) or isinstance(old_stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            olds = [n for n in ast.walk(old_stmt) if isinstance(n, (ast.Tuple, ast.List, ast.Set, ast.Call))]
            news = split_calls(new_stmt)
            values = [eval(compile(ast.Expression(n), path.name, "eval"), builtins) for n in news]  # noqa: S307
            originals = []
            for node in olds:
                try:
                    originals.append(eval(compile(ast.Expression(node), path.name, "eval"), builtins))  # noqa: S307
                except Exception:  # noqa: BLE001, S112 - a part that is not a literal table
                    continue
            for value in values:
                rewritten_tables += 1
                assert any(value == o and type(value) is type(o) for o in originals), (path.name, value)
    assert rewritten_tables >= 40


# ---------------------------------------------------------------- dicts of plain data as one JSON text

_DATA_MODULE = '''"""A module."""

from __future__ import annotations

import re

TEXTS: dict[str, dict[str, str]] = {
    "zh": {"a": "好的，已记下{values}。", "b": "引号\\"和反斜杠\\\\、换行\\n、制表\\t", "c": "'单引号'", "d": "{x}",
           "e": "1", "f": "2", "g": "3", "h": "4"},
    "en": {"a": "ok", "b": "é ü ß", "c": "emoji 😀", "d": "", "e": "1", "f": "2", "g": "3", "h": "4"},
}
NUMBERS = {"one": 1, "half": 0.5, "big": 100000000000000000000, "neg": -3, "yes": True, "no": False, "none": None,
           "list": ["a", 1, [2.5, None]], "nested": {"x": {"y": [1, 2, 3]}}, "more": 7, "e": 1e-9}


class Holder:
    TABLE = {"k%d" % 0 if False else "k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7,
             "k8": 8, "k9": 9, "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15}
    WORDS = {"w0": "0", "w1": "1", "w2": "2", "w3": "3", "w4": "4", "w5": "5", "w6": "6", "w7": "7",
             "w8": "8", "w9": "9", "w10": "10", "w11": "11", "w12": "12", "w13": "13", "w14": "14", "w15": "15"}
'''


def test_a_dict_of_plain_data_becomes_json_with_the_same_values_and_types() -> None:
    from dskit.tooling.codegen.lean import dict_tables_as_json

    lean = dict_tables_as_json(_DATA_MODULE)
    assert lean.count("json.loads(r'''") == 3  # TEXTS, NUMBERS, Holder.WORDS (TABLE's first key is an expression)
    assert "import json\n" in lean and lean.index("from __future__") < lean.index("import json")
    before, after = {}, {}
    exec(compile(_DATA_MODULE, "before", "exec"), before)  # noqa: S102
    exec(compile(lean, "after", "exec"), after)  # noqa: S102

    def typed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: typed(v) for k, v in value.items()}
        if isinstance(value, list):
            return [typed(v) for v in value]
        return (type(value).__name__, value)

    for name in ("TEXTS", "NUMBERS"):
        assert typed(after[name]) == typed(before[name]) and list(after[name]) == list(before[name]), name
    assert typed(after["Holder"].WORDS) == typed(before["Holder"].WORDS)
    assert after["Holder"].TABLE == before["Holder"].TABLE
    assert dict_tables_as_json(lean) == lean  # nothing left to rewrite, json imported once


_FILLER = ", ".join(f'"f{i}": {i}' for i in range(20))


@pytest.mark.parametrize("table", [
    '{"a": ("x", "y"), FILLER}',              # a tuple would come back a list
    '{"a": {"x", "y"}, FILLER}',              # a set is not JSON
    '{1: "one", FILLER}',                     # JSON keys are strings
    '{"a": 1, "b": 2}',                       # too few values to pay
    '{"a": float("nan"), FILLER}',            # not a literal
    '{"a": "' + "'" * 3 + '", FILLER}',       # the text could not be quoted
])
def test_a_dict_json_cannot_give_back_is_left_alone(table: str) -> None:
    from dskit.tooling.codegen.lean import dict_tables_as_json

    source = f"X = {table.replace('FILLER', _FILLER)}\n\n\ndef f():\n    return {{{_FILLER}}}\n"
    assert dict_tables_as_json(source) == source


def test_every_engine_dict_written_as_json_keeps_its_value() -> None:
    from dskit.tooling.codegen.lean import dict_tables_as_json

    rewritten = 0
    for path in engine_paths(ENGINE).values():
        source = path.read_text(encoding="utf-8")
        lean = dict_tables_as_json(source)
        if lean == source:
            continue
        originals = {ast.unparse(s.targets[0] if isinstance(s, ast.Assign) else s.target): s.value
                     for s in ast.walk(ast.parse(source)) if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value}
        for stmt in ast.walk(ast.parse(lean)):
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call) \
                    and ast.unparse(stmt.value.func) == "json.loads":
                name = ast.unparse(stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target)
                assert json.loads(stmt.value.args[0].value) == ast.literal_eval(originals[name]), (path.name, name)
                rewritten += 1
    assert rewritten >= 5
