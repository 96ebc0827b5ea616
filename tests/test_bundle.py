"""The bundler pastes an engine module closure into one correct, deterministic script."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from dskit.tooling.codegen.bundle import BundleError, MainParam, bundle, module_order
from dskit.tooling.codegen.sandbox import check_source, run_code_node


def write_engine(root: Path, modules: dict[str, str]) -> Path:
    """A throwaway engine package: {module name: source}."""
    package = root / "demo"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name, source in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return package


DEMO = {
    "base": '''
        """Base helpers."""

        from __future__ import annotations

        import json
        import re
        from typing import Any

        WORD = re.compile(r"\\w+")


        def base_words(text: str) -> list[str]:
            return WORD.findall(text)


        def base_unused() -> str:
            return json.dumps({})
    ''',
    "fmt": '''
        """Formatting."""

        from __future__ import annotations

        import json
        from dataclasses import dataclass

        from .base import base_words


        @dataclass(frozen=True)
        class FmtBox:
            items: tuple


        def fmt_list(text: str) -> str:
            return json.dumps(list(FmtBox(tuple(base_words(text))).items))
    ''',
    "entry": '''
        """Entry point."""

        from __future__ import annotations

        from typing import TYPE_CHECKING, Any

        from .base import base_words as words_of
        from .fmt import fmt_list

        if TYPE_CHECKING:
            from .base import Any as _Unused

        __all__ = ["entry_node"]


        def entry_node(text: Any = "") -> dict:
            return {"words": fmt_list(str(text)), "count": len(words_of(str(text)))}


        if __name__ == "__main__":
            print(entry_node("a b"))
    ''',
}


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return write_engine(tmp_path, DEMO)


def demo_bundle(package: Path, **kwargs) -> str:
    return bundle("entry:entry_node", [MainParam("text")], package_dir=package, package="demo", **kwargs)


def test_closure_in_dependency_order(demo):
    assert [m.name for m in module_order("entry", demo, "demo")] == ["base", "fmt", "entry"]


def test_bundle_is_one_runnable_standard_library_script(demo):
    code = demo_bundle(demo)
    assert check_source(code) == []
    result = run_code_node(code, {"text": "hello big world"}, {"words": "string", "count": "number"})
    assert result == {"words": '["hello", "big", "world"]', "count": 3}


def test_layout_header_imports_banners_main(demo):
    code = demo_bundle(demo, header="# my header")
    lines = code.splitlines()
    assert lines[0] == "# my header"
    assert code.index("from __future__ import annotations") < code.index("import json")
    assert code.count("from __future__ import annotations") == 1
    assert code.count("import json\n") == 1  # hoisted once although two modules import it
    assert "from dataclasses import dataclass" in demo_bundle(demo, lean=False)
    assert "import dataclasses" not in code and "from dataclasses" not in code  # written out (lean)
    for name in ("base", "fmt", "entry"):
        assert f"# ---- demo/{name}.py ----" in code
    assert code.index("demo/base.py") < code.index("demo/fmt.py") < code.index("demo/entry.py")
    assert "from ." not in code
    assert "words_of = base_words" in code
    assert "__all__" not in code and "TYPE_CHECKING:" not in code and "__main__" not in code
    assert 'def main(text: str = "", **extra) -> dict:' in code
    assert code.rstrip().endswith("return entry_node(text=text)")


def test_unreachable_definitions_and_their_imports_are_pruned(demo):
    code = demo_bundle(demo)
    assert "base_unused" not in code
    assert "from typing import" not in code  # Any only annotates: annotations are never evaluated
    assert "from typing import" in demo_bundle(demo, lean=False)
    full = demo_bundle(demo, prune=False)
    assert "base_unused" in full


def test_deterministic(demo):
    assert demo_bundle(demo) == demo_bundle(demo)
    tree = ast.parse(demo_bundle(demo))
    assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)][-1] == "main"


def test_extra_inputs_can_be_passed_through(tmp_path):
    package = write_engine(tmp_path, {"entry": '''
        def entry_node(a="", **params):
            return {"r": a + ",".join(sorted(params))}
    '''})
    code = bundle("entry:entry_node", [MainParam("a")], package_dir=package, package="demo", pass_extra=True)
    assert run_code_node(code, {"a": "x:", "city": "1", "date": "2"}, {"r": "string"}) == {"r": "x:city,date"}
    plain = bundle("entry:entry_node", [MainParam("a")], package_dir=package, package="demo")
    assert run_code_node(plain, {"a": "x", "city": "1"}, {"r": "string"}) == {"r": "x"}


def test_missing_inputs_fall_back_to_defaults(demo):
    assert run_code_node(demo_bundle(demo), {}, {"words": "string", "count": "number"})["count"] == 0


@pytest.mark.parametrize("modules, message", [
    ({"entry": "from .other import x\ndef entry_node():\n    return {}\n",
      "other": "x = 1\ndef entry_node():\n    return {}\n"}, "`entry_node` is defined in both"),
    ({"entry": "from .other import y\nimport re\ndef entry_node():\n    return {}\n",
      "other": "re = 1\ny = 2\n"}, "`re` is imported in demo/entry.py"),
    ({"entry": "from .other import y\nfrom os import path\ndef entry_node():\n    return {}\n",
      "other": "from sys import path\ny = 1\n"}, "`path` is imported as"),
    ({"entry": "def entry_node():\n    return {}\ndef filter(x):\n    return x\n"}, "shadows a Python builtin"),
    ({"entry": "def entry_node():\n    return {}\nresult = 1\n"}, "clashes with the driver"),
    ({"entry": "def entry_node():\n    return {}\ndef main():\n    return {}\n"}, "clashes with the driver"),
    ({"entry": "from .other import y\ndef entry_node():\n    return {}\n",
      "other": "from .entry import entry_node\ny = 1\n"}, "import cycle between engine modules"),
    ({"entry": "import yaml\ndef entry_node():\n    return {}\n"}, "`yaml` is not in the standard library"),
    ({"entry": "def entry_node():\n    import requests\n    return {}\n"}, "`requests` is not in the standard library"),
    ({"entry": "import demo.other\ndef entry_node():\n    return {}\n", "other": ""}, "engine modules import each other"),
    ({"entry": "from . import other\ndef entry_node():\n    return {}\n", "other": ""}, "only `from .module import name`"),
    ({"entry": "from .other import *\ndef entry_node():\n    return {}\n", "other": ""}, "`import *`"),
    ({"entry": "def entry_node():\n    from .other import y\n    return {}\n", "other": "y = 1"}, "inside a block"),
    ({"entry": "x = 1\n"}, "has no top-level `entry_node`"),
    ({"entry": "from .missing import x\ndef entry_node():\n    return {}\n"}, "no such engine module"),
])
def test_fails_loudly(tmp_path, modules, message):
    package = write_engine(tmp_path, modules)
    with pytest.raises(BundleError) as info:
        bundle("entry:entry_node", [], package_dir=package, package="demo")
    assert message in str(info.value)


def test_collisions_are_found_even_in_unreachable_code(tmp_path):
    package = write_engine(tmp_path, {
        "entry": "from .other import used\ndef entry_node():\n    return {'r': used()}\ndef helper():\n    return 1\n",
        "other": "def used():\n    return 'x'\ndef helper():\n    return 2\n",
    })
    with pytest.raises(BundleError, match="`helper` is defined in both"):
        bundle("entry:entry_node", [], package_dir=package, package="demo")


def test_private_names_two_modules_define_are_renamed_after_their_module(tmp_path):
    """Each module keeps calling its own ``_helper``; nothing else changes (attributes, strings)."""
    package = write_engine(tmp_path, {
        "entry": ("from .other import used\n_WORDS = ('a',)\n"
                  "def _helper(words=_WORDS):\n    _WORDS = words\n    return '_helper' + str(len(_WORDS))\n"
                  "def entry_node():\n    return {'r': _helper() + used() + f'{_helper()}'}\n"),
        "other": ("import types\n_WORDS = ('b', 'c')\ndef _helper():\n    ns = types.SimpleNamespace(_helper=1)\n"
                  "    return str(len(_WORDS) + ns._helper)\ndef used():\n    return _helper()\n"),
    })
    code = bundle("entry:entry_node", [], package_dir=package, package="demo")
    assert "def _entry_helper(words=_entry_WORDS)" in code and "def _other_helper()" in code
    assert "ns._helper" in code and "SimpleNamespace(_helper=1)" in code and "'_helper'" in code
    assert run_code_node(code, {}, {"r": "string"}) == {"r": "_helper13_helper1"}


@pytest.mark.parametrize("entry, message", [
    ("from .other import used, _helper\ndef _helper():\n    return 1\ndef entry_node():\n    return {}\n",
     "private names that several modules define"),
    ("from .other import used\ndef _helper(x=0):\n    return x\ndef entry_node(_helper=None):\n    return {}\n",
     "a parameter is named"),
])
def test_shared_private_names_that_cannot_be_renamed_fail_loudly(tmp_path, entry, message):
    package = write_engine(tmp_path, {"entry": entry, "other": "def used(**kw):\n    return 'x'\ndef _helper():\n    return 2\n"})
    with pytest.raises(BundleError, match=message):
        bundle("entry:entry_node", [], package_dir=package, package="demo")


def test_entry_may_be_given_with_the_package_prefix(demo):
    assert bundle("demo.entry:entry_node", [MainParam("text")], package_dir=demo, package="demo") == demo_bundle(demo)


def test_the_real_engine_bundles_into_portable_scripts():
    from dskit.tooling.codegen.code_nodes import generate_code_nodes
    from dskit.tooling.codegen.nodespecs import NODE_SPECS

    files = generate_code_nodes(Path("."))
    assert len(files) == len(NODE_SPECS)
    for path, code in files.items():
        assert check_source(code) == [], path
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.ImportFrom):
                assert node.level == 0 and not (node.module or "").startswith("dskit"), path
            if isinstance(node, ast.Import):
                assert not any(alias.name.startswith("dskit") for alias in node.names), path
