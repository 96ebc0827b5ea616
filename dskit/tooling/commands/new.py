"""``dskit new CATALOG [--out DIR]``: your own assistant in one command.

From a task catalog to the three Chatflow files (fast, classic, plugin) whose every text a user
reads — node titles and notes, prompts, the opening statement, the suggested questions, the replies —
is in the catalog's ``language`` and names the catalog's tasks. Then the same checks as
``dskit validate`` (problems and warnings) and ``dskit check-dsl`` run on what was written, and it
says ok or lists the problems.

Why a command of its own next to ``dskit gen --catalog`` (which builds the same files): ``gen`` is
the maintainer's tool for the repository's generated files; a Dify builder starting from a catalog
needs one command that checks the catalog first, writes a folder of their own and checks the result.
Both share the builder, so they cannot drift.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

WROTE = {
    "zh": "已写入 {folder}：三个 Chatflow，导入后的应用名为 {names}",
    "en": "Wrote the three Chatflows to {folder}; imported, the apps are called {names}",
}
NEXT_STEPS = {
    "zh": "下一步：在 Dify 中「导入 DSL 文件」选择 {fast}；或先在本机试聊：dskit chat --catalog {catalog} "
          "--base-url URL --model NAME",
    "en": "Next: in Dify, Studio → Import DSL file → {fast}; or chat with it here first: dskit chat --catalog "
          "{catalog} --base-url URL --model NAME",
}


def register(subparsers: argparse._SubParsersAction) -> None:
    from dskit.tooling.commands.gen import add_model_target_options  # noqa: PLC0415

    parser = subparsers.add_parser(
        "new",
        help="your own assistant: Chatflow files for a task catalog, in its language, checked",
        description="Build the fast, classic and plugin Chatflows for a task catalog, every text in the "
                    "catalog's language, then run the checks of `dskit validate` and `dskit check-dsl` on "
                    "them. Exit status 1 when the catalog or a file has a problem.",
    )
    parser.add_argument("catalog", type=Path, metavar="CATALOG", help="the task catalog (JSON, docs/catalog.md)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the files (default: ./dsl_<name>/, <name> being the catalog's "
                             "name as a folder name - letters and digits of any script, the rest '_' - else "
                             "the file's name without .json)")
    add_model_target_options(parser)
    parser.set_defaults(func=run)


def _validate(path: Path) -> tuple[str | None, list[str]]:
    """(catalog text, warnings) as ``dskit validate`` sees them; text None after printing the problems."""
    import json  # noqa: PLC0415

    from dskit.catalog.catalog import validate_catalog  # noqa: PLC0415
    from dskit.catalog.catalog_lint import catalog_warnings  # noqa: PLC0415
    from dskit.tooling.commands.validate import read_catalog_text  # noqa: PLC0415

    try:
        text = read_catalog_text(path)
    except ValueError as error:
        print(f"{path}: {error}", file=sys.stderr)
        return None, []
    problems = validate_catalog(text)
    if problems:
        print(f"{path}: {len(problems)} problem(s)")
        for problem in problems:
            print(f"  {problem}")
        return None, []
    return text, catalog_warnings(json.loads(text))


def run(args: argparse.Namespace) -> int:
    import json  # noqa: PLC0415

    from dskit.tooling.commands.gen import catalog_folder, model_target  # noqa: PLC0415
    from dskit.tooling.dslbuild.code_sources import shipped_code_nodes  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import FlowOptions  # noqa: PLC0415

    chosen = model_target(args, "new")
    if chosen is None:
        return 2
    provider, model, identifier, target = chosen
    text, warnings = _validate(args.catalog)
    if text is None:
        return 1
    print(f"{args.catalog}: ok" + (f", {len(warnings)} warning(s)" if warnings else ""), flush=True)
    for warning in warnings:
        print(f"  warning: {warning}")
    catalog_json = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
    lang = "en" if json.loads(text).get("language") == "en" else "zh"
    options = FlowOptions(provider=provider, model=model, plugin_identifier=identifier, target=target,
                          catalog_json=catalog_json, lang=lang, localized=True,
                          structured_output=args.structured_output)
    out = (args.out or catalog_folder(args.catalog, catalog_json)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    written: dict[str, Path] = {}
    names: dict[str, str] = {}
    with shipped_code_nodes():  # the checkout's code_nodes/, not a fresh bundle of the engine (seconds, not a minute)
        status = _write_and_check(options, out, written, names)
    if status == 0:
        quote = "“{}”" if lang == "en" else "「{}」"
        print(WROTE[lang].format(folder=out, names=("、" if lang == "zh" else ", ").join(
            quote.format(names[layout]) for layout in ("fast", "classic", "plugin"))))
        print(NEXT_STEPS[lang].format(fast=written["fast"], catalog=args.catalog))
    return status


def _write_and_check(options, out: Path, written: dict[str, Path],  # noqa: ANN001 - FlowOptions
                     names: dict[str, str]) -> int:
    """Write the three layouts to ``out`` and check each as ``dskit check-dsl`` does; 1 on any problem.
    ``written`` and ``names`` get each layout's file and Dify app name."""
    from dskit.tooling.dslbuild.check import check_dsl  # noqa: PLC0415
    from dskit.tooling.dslbuild.flows import build_classic, build_fast  # noqa: PLC0415
    from dskit.tooling.dslbuild.plugin_flow import build_plugin  # noqa: PLC0415

    from dskit.tooling.progress import steps  # noqa: PLC0415

    status = 0
    provider, model, target = options.provider, options.model, options.target
    for layout, build in (("fast", build_fast), ("classic", build_classic), ("plugin", build_plugin)):
        name = "dialogue_chatflow.yml" if layout == "fast" else f"dialogue_chatflow_{layout}.yml"
        path = out / name
        # Seconds a file (the first one's code nodes are checked for Dify's sandbox afresh): each step shown.
        with steps(f"{layout}: building and checking") as step:  # the checks of dskit check-dsl
            step("building the Chatflow")
            flow = build(options)
            step("writing the YAML")
            path.write_text(flow.to_yaml(), encoding="utf-8", newline="\n")
            problems = check_dsl(path.read_text(encoding="utf-8"), run_code=False, target=target, progress=step)
        written[layout], names[layout] = path, flow.name
        if problems:
            status = 1
            print(f"{path}: {len(problems)} problem(s)")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{path}: ok ({provider}, {model}, Dify {target.name}+)", flush=True)
    return status
