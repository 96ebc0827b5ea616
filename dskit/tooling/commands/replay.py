"""``dskit replay crosswoz|risawoz PATH``: replay a dialogue-state data set through the engine.

Prints joint goal accuracy, slot accuracy, dialogues, turns and turns per second as a table, or
with ``--json`` one JSON object with exactly those keys. See docs/replay.md.
"""

from __future__ import annotations

import argparse
import json
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``replay`` with its ``crosswoz`` and ``risawoz`` sub-commands."""
    parser = subparsers.add_parser(
        "replay",
        help="replay CrossWOZ / RiSAWOZ dialogue states through the engine and score them",
        description="Replay a dialogue-state data set through the engine: JGA, slot accuracy, speed.",
    )
    sub = parser.add_subparsers(dest="dataset", metavar="DATASET")

    cross = sub.add_parser("crosswoz", help="CrossWOZ (json or json.zip)",
                           description="Replay CrossWOZ: gold state deltas, or a rule tracker over the "
                                       "gold user dialogue acts (the CrossWOZ paper's rule DST evaluation).")
    cross.add_argument("path", help="CrossWOZ file, e.g. val.json.zip")
    cross.add_argument("--from", dest="source", choices=("gold-deltas", "user-acts", "llm"), default="gold-deltas",
                       help="commands from consecutive gold states (default), from the user dialogue acts, or "
                            "from a model reading each user turn (llm: needs --base-url and --model)")
    cross.add_argument("--teacher-forcing", action="store_true",
                       help="llm: start each turn from the previous gold state instead of the engine's own")
    _common(cross)
    _llm_options(cross)
    cross.set_defaults(func=run_crosswoz)

    risa = sub.add_parser("risawoz", help="RiSAWOZ (json or json.gz, stanford-oval/dialogues format)",
                          description="Replay RiSAWOZ turn_inform deltas.")
    risa.add_argument("path", help="RiSAWOZ file, e.g. zh_fewshot.json.gz")
    risa.add_argument("--from", dest="source", choices=("turn-inform", "llm"), default="turn-inform",
                      help="the turn_inform deltas (default) or a model reading each user turn")
    risa.add_argument("--teacher-forcing", action="store_true",
                      help="start each turn from the previous turn's gold state instead of the engine's own")
    _common(risa)
    _llm_options(risa)
    risa.set_defaults(func=run_risawoz)

    parser.set_defaults(func=lambda args: (parser.print_help(), 0)[1])


def _llm_options(parser: argparse.ArgumentParser) -> None:
    from dskit.tooling.replay.llm_cli import add_llm_options

    add_llm_options(parser)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object: jga, slot_accuracy, dialogues, turns, turns_per_second")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N dialogues")
    parser.add_argument("--failures", type=int, default=0, metavar="N", help="also list the first N failing turns")
    parser.add_argument("--lang", choices=("zh", "en"), default="zh", help="language of the table (default zh)")


def _emit(result, args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(result.as_json(), ensure_ascii=False))
    else:
        from dskit.tooling.replay.report import print_report

        print_report(result, lang=args.lang, failures=args.failures)
    return 0


def _run(args: argparse.Namespace, dataset: str, replay) -> int:
    """Replay and print; any problem with the file is one line on stderr and exit code 2.

    The readers raise DataError for what they check; a file of the right kind of JSON but another
    shape (a list where an object belongs, no dialogues at all) fails deeper, so those errors are
    reported here as the file's problem too, never as a traceback.
    """
    from dskit.catalog.catalog import CatalogError
    from dskit.tooling.replay.data import DataError

    try:
        result = replay()
    except DataError as exc:
        return _fail(str(exc))
    except CatalogError:
        return _fail(f"{args.path}: no dialogue states to replay (no domain or slot in the file)")
    except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
        return _fail(f"{args.path}: not {dataset} data as expected ({type(exc).__name__}: {str(exc)[:160]})")
    except RecursionError:
        return _fail(f"{args.path}: not {dataset} data as expected (nested too deeply)")
    if result.turns == 0:
        return _fail(f"{args.path}: no {dataset} turns to replay")
    return _emit(result, args)


def _fail(message: str) -> int:
    print(f"dskit replay: {message}", file=sys.stderr)
    return 2


def run_crosswoz(args: argparse.Namespace) -> int:
    if args.source == "llm":
        from dskit.tooling.replay.llm_cli import run_llm

        return run_llm(args, "crosswoz")
    from dskit.tooling.replay import replay_crosswoz

    return _run(args, "CrossWOZ", lambda: replay_crosswoz(args.path, mode=args.source, limit=args.limit))


def run_risawoz(args: argparse.Namespace) -> int:
    if args.source == "llm":
        from dskit.tooling.replay.llm_cli import run_llm

        return run_llm(args, "risawoz")
    from dskit.tooling.replay import replay_risawoz

    return _run(args, "RiSAWOZ",
                lambda: replay_risawoz(args.path, teacher_forcing=args.teacher_forcing, limit=args.limit))
