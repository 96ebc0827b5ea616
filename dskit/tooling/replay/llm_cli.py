"""The ``--from llm`` part of ``dskit replay``: options, the run (with and without noise), the output.

Same ``--json`` keys as the other modes (``jga``, ``slot_accuracy``, ``dialogues``, ``turns``,
``turns_per_second``) plus ``llm_calls``, ``errors`` (failed calls and unreadable answers), tokens and
latency per turn and ``domains`` (per-domain JGA). With ``--noise`` the clean replay runs first (free
when its answers are in the ``--cache``) and the JSON adds ``clean_jga``, ``clean_slot_accuracy`` and
``jga_drop``. Exit status 1 when any model call failed (each such turn counted wrong), 2 for bad options.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .llm import NOISES


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    from dskit.tooling.llm.options import add_model_options  # noqa: PLC0415

    parser.add_argument("--noise", choices=NOISES, default=None,
                        help="llm: perturb user turns (typo, turnback, filler) and report the drop")
    parser.add_argument("--seed", type=int, default=0, help="llm: seed of the noise (default 0)")
    add_model_options(parser, required=False)


def _replay(args: argparse.Namespace, dataset: str, client: Any, noise: str | None) -> Any:
    from .crosswoz import replay_crosswoz_llm  # noqa: PLC0415
    from .risawoz import replay_risawoz_llm  # noqa: PLC0415

    run = replay_crosswoz_llm if dataset == "crosswoz" else replay_risawoz_llm
    kwargs = {"limit": args.limit, "teacher_forcing": args.teacher_forcing, "noise": noise, "seed": args.seed}
    from dskit.tooling.progress import counted  # noqa: PLC0415

    with counted(f"{dataset} {noise or 'clean'}", None, transient=False, quiet=args.json) as bar:
        return run(args.path, client, progress=bar.done, **kwargs)


def _fail(message: str) -> int:
    print(f"dskit replay: {message}", file=sys.stderr)
    return 2


def run_llm(args: argparse.Namespace, dataset: str) -> int:
    from dskit.tooling.llm.options import OptionError, client_from_args  # noqa: PLC0415

    from dskit.catalog.catalog import CatalogError  # noqa: PLC0415

    from .data import DataError  # noqa: PLC0415
    from .report import print_report  # noqa: PLC0415

    try:
        client = client_from_args(args)
    except OptionError as error:
        return _fail(str(error))
    try:
        clean = _replay(args, dataset, client, None)
        noisy = _replay(args, dataset, client, args.noise) if args.noise else None
    except DataError as error:
        return _fail(str(error))
    except CatalogError:
        return _fail(f"{args.path}: no dialogue states to replay (no domain or slot in the file)")
    except (AttributeError, KeyError, TypeError, ValueError, IndexError, RecursionError) as error:
        # a file of the right kind of JSON but another shape fails deeper: the file's problem, one line
        return _fail(f"{args.path}: not {dataset} data as expected ({type(error).__name__}: {str(error)[:160]})")
    if clean.turns == 0:
        return _fail(f"{args.path}: no {dataset} turns to replay")
    shown = noisy or clean
    if args.json:
        data = shown.as_json()
        data["model"] = client.config.model
        if noisy is not None:
            data.update(clean_jga=clean.jga, clean_slot_accuracy=clean.slot_accuracy,
                        jga_drop=round(clean.jga - noisy.jga, 4))
        print(json.dumps(data, ensure_ascii=False))
    else:
        for result in [clean] + ([noisy] if noisy else []):
            print_report(result, lang=args.lang, failures=args.failures)
            print(json.dumps(result.llm, ensure_ascii=False))
            print("per domain JGA: " + json.dumps(result.domain_jga(), ensure_ascii=False))
        if noisy is not None:
            print(f"JGA drop with {args.noise} noise: {clean.jga - noisy.jga:+.2%} "
                  f"({clean.jga:.2%} -> {noisy.jga:.2%})")
    failed = sum(r.llm["failed_calls"] for r in [clean] + ([noisy] if noisy else []))
    return 1 if failed else 0
