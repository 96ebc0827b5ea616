"""``dskit gen``: write the generated files (code_nodes/*.py and their READMEs); ``--check`` for CI."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gen",
        help="write generated files (code_nodes/*.py, READMEs); --check fails when any is stale",
        description="Generate code_nodes/*.py from the engine. With --check, write nothing and exit 1 "
                    "listing every generated file that is missing or out of date.",
    )
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a file is stale")
    parser.add_argument("--root", type=Path, default=None, help="repository root (default: this checkout)")
    add_model_target_options(parser)
    parser.add_argument("--catalog", type=Path, default=None, metavar="FILE",
                        help="build the three Chatflows for this task catalog (TASK_CATALOG, and the classic "
                             "layout's classes and extractor parameters, every text in the catalog's language); "
                             "default folder ./dsl_<name>/, <name> being the catalog's name (see also `dskit new`)")
    parser.add_argument("--out", type=Path, default=None,
                        help="with --provider/--model/--catalog/--dify-version: folder for the DSL files (default: dsl/, "
                             "or ./dsl_<catalog name>/ with --catalog)")
    parser.set_defaults(func=run)


def _catalog_option(path: Path) -> tuple[str, str] | None:
    """(catalog JSON, language) of ``--catalog``, or None after saying what is wrong with it."""
    import json

    from dskit.catalog.catalog import CatalogError, load_catalog

    try:
        text = path.read_text(encoding="utf-8-sig")
        catalog = load_catalog(text)
    except OSError as error:
        print(f"dskit gen: --catalog {path}: cannot read ({error.strerror or error})", file=sys.stderr)
        return None
    except CatalogError as error:
        print(f"dskit gen: --catalog {path}: {len(error.problems)} problem(s)", file=sys.stderr)
        for problem in error.problems:
            print(f"  {problem}", file=sys.stderr)
        return None
    return json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":")), catalog.language


def add_model_target_options(parser: argparse.ArgumentParser) -> None:
    """--provider, --model, --plugin-identifier and --dify-version (``gen`` and ``new`` share them)."""
    parser.add_argument("--provider", help="model provider for every LLM node, ORG/PLUGIN/PROVIDER "
                                           "(e.g. langgenius/tongyi/tongyi); sets the DSL's dependencies too")
    parser.add_argument("--model", help="model name for every LLM node (e.g. qwen-plus)")
    parser.add_argument("--plugin-identifier", metavar="ORG/PLUGIN:VERSION@CHECKSUM",
                        help="the provider plugin's full identifier, as in a Chatflow your Dify exported "
                             "(needed for providers other than langgenius/openai: Dify's plugin daemon "
                             "refuses identifiers without the checksum)")
    parser.add_argument("--structured-output", action="store_true",
                        help="the fast layout's understand node asks Dify for structured output with the "
                             "catalog's JSON schema: only for a model with native structured output "
                             "(docs/dify.md, 'Structured output'); off by default")
    parser.add_argument("--dify-version", metavar="X.Y",
                        help="build the DSL files for this Dify release (1.0 or later); default: the "
                             "minimum this project supports")


def model_target(args: argparse.Namespace, command: str) -> tuple[str, str, str | None, object] | None:
    """(provider, model, plugin identifier, Dify target) from the options, or None after saying why not."""
    from dskit.tooling.dslbuild.builder import KNOWN_PLUGINS, FlowError, plugin_of
    from dskit.tooling.dslbuild.dify_rules import PLUGIN_IDENTIFIER
    from dskit.tooling.dslbuild.dify_versions import DEFAULT_TARGET, DifyVersionError, Target, parse_release
    from dskit.tooling.dslbuild.flows import FlowOptions

    defaults = FlowOptions()
    provider = args.provider or defaults.provider
    try:
        plugin = plugin_of(provider)
        target = Target(parse_release(args.dify_version)) if args.dify_version else DEFAULT_TARGET
    except (FlowError, DifyVersionError) as error:
        print(f"dskit {command}: {error}", file=sys.stderr)
        return None
    identifier = args.plugin_identifier
    if identifier is None and plugin not in KNOWN_PLUGINS:
        print(f"dskit {command}: give --plugin-identifier for {plugin} ({plugin}:VERSION@CHECKSUM, as in the "
              "dependencies of a Chatflow your Dify exported): Dify's plugin daemon refuses an identifier "
              "without its checksum", file=sys.stderr)
        return None
    if identifier is not None and not (PLUGIN_IDENTIFIER.fullmatch(identifier) and identifier.startswith(plugin + ":")):
        print(f"dskit {command}: --plugin-identifier must look like {plugin}:VERSION@CHECKSUM (64 hex digits), "
              f"got {identifier!r}", file=sys.stderr)
        return None
    return provider, args.model or defaults.model, identifier, target


# A folder name's longest slug: 64 characters, and at most 200 bytes of UTF-8 (64 Chinese characters are
# 192), within the 255 bytes a file name may have on Linux and macOS with ``dsl_`` before it.
SLUG_MAX_CHARS = 64
SLUG_MAX_BYTES = 200


def folder_slug(text: str) -> str:
    """``text`` as a safe folder name ('' when nothing is left): letters and digits of any script kept
    ("Bright Smile Dental assistant" -> "bright_smile_dental_assistant", "星辰驾校 学车助手" ->
    "星辰驾校_学车助手"), everything else (spaces, punctuation, slashes, dots) one ``_``, lower case, at
    most :data:`SLUG_MAX_CHARS` characters. No path separator, no leading dot, no reserved device name
    (the folder is always ``dsl_`` + the slug)."""
    import re
    import unicodedata

    text = unicodedata.normalize("NFKC", str(text)).lower()
    slug = re.sub(r"_{2,}", "_", re.sub(r"[^\w-]+", "_", text).strip("_-"))[:SLUG_MAX_CHARS]
    while len(slug.encode("utf-8")) > SLUG_MAX_BYTES:
        slug = slug[:-1]
    return slug.strip("_-")


def catalog_folder(path: Path, catalog_json: str) -> Path:
    """``./dsl_<slug>/``: the slug of the catalog's ``name`` (:func:`folder_slug`), else of the file's name,
    else ``dsl_assistant``."""
    import json

    name = str(json.loads(catalog_json).get("name") or "")
    return Path("dsl_" + (folder_slug(name) or folder_slug(path.stem) or "assistant"))


def _custom_dsl(args: argparse.Namespace, root: Path) -> int:
    """Write only the Chatflow DSL files (all three layouts), for the provider, model, catalog and Dify
    release the user named. With --catalog every text is in the catalog's language (as ``dskit new``)."""
    from dskit.tooling.dslbuild.flows import FlowOptions
    from dskit.tooling.dslbuild.generate import dsl_texts

    chosen = model_target(args, "gen")
    if chosen is None:
        return 2
    provider, model, identifier, target = chosen
    catalog_json, lang = None, FlowOptions().lang
    if args.catalog is not None:
        loaded = _catalog_option(args.catalog)
        if loaded is None:
            return 2
        catalog_json, lang = loaded
    options = FlowOptions(provider=provider, model=model, catalog_json=catalog_json, lang=lang,
                          plugin_identifier=identifier, target=target, localized=catalog_json is not None,
                          structured_output=args.structured_output)
    default_out = catalog_folder(args.catalog, catalog_json) if catalog_json is not None else root / "dsl"
    out = (args.out or default_out).resolve()
    files = dsl_texts(options)
    for relative, text in files.items():
        path = out / Path(relative).name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {path} ({options.provider}, {options.model}, Dify {target.name}+, DSL {target.dsl_version}"
              + (f", catalog {args.catalog.name})" if args.catalog is not None else ")"))
    return 0


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.codegen.bundle import BundleError
    from dskit.tooling.generated import REPO_ROOT, stale_files, write_all

    root = (args.root or REPO_ROOT).resolve()
    custom = (args.provider or args.model or args.catalog or args.dify_version or args.plugin_identifier
              or args.structured_output)
    if custom and not args.check:
        return _custom_dsl(args, root)
    try:
        if args.check:
            stale = stale_files(root)
            if stale:
                print("stale generated files (run `dskit gen`):", file=sys.stderr)
                for path in stale:
                    print(f"  {path}", file=sys.stderr)
                return 1
            print("generated files are up to date")
            return 0
        touched = write_all(root)
    except BundleError as error:
        print(f"dskit gen: cannot bundle the engine: {error}", file=sys.stderr)
        return 2
    for path in touched:
        print(f"wrote {path}")
    if not touched:
        print("generated files are up to date")
    from dskit.tooling.docfigures import differences  # noqa: PLC0415

    left = list(differences(root))  # what writing cannot fix: a mark naming no figure, a re-recorded cassette
    for line in left:
        print(f"dskit gen: {line}", file=sys.stderr)
    return 1 if left else 0
