"""``dskit eval``: run evaluation suites against a model and score every turn.

    dskit eval [SUITE ...] --base-url URL --model NAME [--target engine|flow|dify] [--layout fast ...]
               [--runs N] [--repeat N] [--parallel N] [--json] [--trace FILE] [--report DIR] [--cache FILE ...]

Suites default to examples/eval/. Exit status: 0 when every conversation ran to its end, 1 when any
could not be run (each such turn has a one-line error in the table and the trace) or when a Dify app's
catalog check that was asked for could not run (the table says why), 2 for bad options or suite
files. Definitions of every figure: docs/eval.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    from dskit.tooling.llm.options import add_model_options  # noqa: PLC0415

    parser = subparsers.add_parser(
        "eval", help="measure a model on evaluation suites (accuracy, wrongful executions, cost, latency)",
        description="Run conversations with known right answers (examples/eval/*.yaml) against a live "
                    "model and score every turn: joint goal accuracy, slot F1, task success, wrongful "
                    "executions, unasked slot writes, calls, tokens and latency. See docs/eval.md.")
    parser.add_argument("suites", nargs="*", type=Path, help="suite files or directories (default: examples/eval)")
    parser.add_argument("--target", choices=("engine", "flow", "dify"), default="engine",
                        help="engine: the fast Chatflow's understanding call + the engine (default); flow: the "
                             "shipped DSL in graphon, every LLM node on the model; dify: a deployed app")
    parser.add_argument("--layout", action="append", choices=("fast", "classic", "plugin"), default=None,
                        help="flow target: layout(s) to run side by side (repeatable; default fast)")
    parser.add_argument("--dsl", action="append", type=Path, default=None, metavar="PATH",
                        help="flow target: run this DSL file (repeatable: e.g. an older file for before/after)")
    parser.add_argument("--suite", action="append", default=None, metavar="NAME",
                        help="only the suites with this name (repeatable)")
    parser.add_argument("--ungrounded", choices=("drop", "ask"), default=None,
                        help="override every suite catalog's policy.ungrounded: what happens to a value the "
                             "user did not say (docs/grounding.md), to measure both ways")
    parser.add_argument("--repeat", type=int, default=None, help="run every conversation N times (consistency)")
    parser.add_argument("--runs", type=int, default=1, metavar="N",
                        help="run everything N times against the live model and report the median run with the "
                             "median and worst of each headline figure and the consistency (the share of turns "
                             "with the same outcome in every run); with --record, run i goes to FILE.run<i> and "
                             "FILE becomes the median run's cassette (default 1; live figures: 3 or more)")
    parser.add_argument("--parallel", type=int, default=1, help="conversations at once (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--trace", type=Path, default=None, metavar="FILE", help="write every turn as JSON lines")
    parser.add_argument("--report", type=Path, default=None, metavar="DIR",
                        help="write index.html, chart.png and trace.jsonl into DIR")
    parser.add_argument("--quantization", default="", help="label recorded with the figures, e.g. Q4_K_M")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--answers-nothing", action="store_true",
                        help="no model: every request is answered with no command ({\"commands\": []}), so the "
                             "figures are what the state scores by staying as it is, the baseline beside a "
                             "model's (docs/eval.md)")
    dify = parser.add_argument_group("dify target (a deployed app over Dify's Service API)")
    dify.add_argument("--dify-url", default=None, help="Service API base, e.g. https://api.dify.ai/v1")
    dify.add_argument("--dify-key-env", default="DIFY_API_KEY",
                      help="environment variable holding the app's API key (default DIFY_API_KEY)")
    dify.add_argument("--dify-mode", choices=("blocking", "streaming"), default="blocking",
                      help="streaming counts every LLM call with its own tokens and text; blocking gives only "
                           "the turn's total tokens, so the number of calls is reported as unknown")
    dify.add_argument("--dify-auto-name", action="store_true",
                      help="keep Dify's default auto_generate_name: true (sent false otherwise). Dify then asks its "
                           "default model for a title on each conversation's first message; that call is not counted")
    dify.add_argument("--dify-console-url", default=None,
                      help="console API base (e.g. http://localhost/console/api): with --dify-app-id and a sign-in, "
                           "the app's TASK_CATALOG is compared with each suite's catalog and a suite that differs "
                           "is not scored. Without it (or when the sign-in is refused) the run says the check did "
                           "not run, and a turn that is not right is not blamed on the model unless the app's state "
                           "carries the suite's catalog mark")
    dify.add_argument("--dify-app-id", default=None, help="the app's id (its URL in the console), for the catalog check")
    dify.add_argument("--dify-console-email-env", default="DIFY_CONSOLE_EMAIL",
                      help="environment variable holding a console account's email (default DIFY_CONSOLE_EMAIL); "
                           "with the password, eval logs in as Dify's web UI does (cookie and X-CSRF-Token): the "
                           "only sign-in that reads the published workflow on Dify 1.12")
    dify.add_argument("--dify-console-password-env", default="DIFY_CONSOLE_PASSWORD",
                      help="environment variable holding that account's password (default DIFY_CONSOLE_PASSWORD)")
    dify.add_argument("--dify-admin-key-env", default="DIFY_ADMIN_API_KEY",
                      help="environment variable holding the deployment's ADMIN_API_KEY (default DIFY_ADMIN_API_KEY), "
                           "used with --dify-workspace-id when no email and password are given; Dify 1.12 lets it "
                           "read only the app's draft")
    dify.add_argument("--dify-workspace-id", default=None,
                      help="the workspace the admin API key acts in (sent as X-WORKSPACE-ID)")
    dify.add_argument("--dify-console-token-env", default="DIFY_CONSOLE_TOKEN",
                      help="environment variable holding a console access token (default DIFY_CONSOLE_TOKEN), the "
                           "last resort: enough before Dify's CSRF check; on 1.12 it reads only the draft")
    add_model_options(parser, required=False)
    parser.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"dskit eval: {message}", file=sys.stderr)
    return 2


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False,  # noqa: S607
                             cwd=Path(__file__).resolve().parent, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def machine() -> str:
    """The machine the figures come from: CPU model, cores, OS."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def _meta(args: argparse.Namespace, client: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
                            "dskit_commit": _git_commit()}
    if client is not None:
        meta.update(model=client.config.model, quantization=args.quantization, deadline=client.config.deadline,
                    json_mode=args.json_mode, cache=str(args.replay or args.record or args.cache or ""))
    if args.target == "dify":
        meta.update(model=args.model or "(the app's)", dify_mode=args.dify_mode)
    return meta


def _runs(args: argparse.Namespace, client: Any) -> list[tuple[str, Any]]:
    """(label, target) pairs to run side by side."""
    if args.target == "engine":
        from dskit.tooling.eval.engine_target import EngineTarget  # noqa: PLC0415

        return [("engine", EngineTarget(client))]
    if args.target == "flow":
        from dskit.tooling.eval.flow_target import FlowTarget  # noqa: PLC0415

        runs = [(f"flow:{path.name}", FlowTarget(client, dsl_path=path)) for path in args.dsl or []]
        if args.layout or not runs:
            runs += [(f"flow:{layout}", FlowTarget(client, layout=layout)) for layout in args.layout or ["fast"]]
        return runs
    from dskit.tooling.eval.dify_target import DifyTarget  # noqa: PLC0415

    key = os.environ.get(args.dify_key_env, "")
    return [(f"dify:{args.dify_mode}", DifyTarget(args.dify_url, key, mode=args.dify_mode, deadline=args.deadline,
                                                  auto_generate_name=args.dify_auto_name,
                                                  console=_console_access(args)))]


def _console_access(args: argparse.Namespace) -> Any:
    """The console sign-in the options and environment give (None without --dify-console-url)."""
    from dskit.tooling.eval.dify_console import ConsoleAccess  # noqa: PLC0415

    if not args.dify_console_url:
        return None
    return ConsoleAccess(args.dify_console_url, args.dify_app_id,
                         email=os.environ.get(args.dify_console_email_env, ""),
                         password=os.environ.get(args.dify_console_password_env, ""),
                         admin_key=os.environ.get(args.dify_admin_key_env, ""),
                         workspace_id=args.dify_workspace_id or "",
                         token=os.environ.get(args.dify_console_token_env, ""))


def _console_problem(args: argparse.Namespace) -> str:
    """Why the catalog check's options cannot work ("" when they can, or when no check is asked for)."""
    if bool(args.dify_console_url) != bool(args.dify_app_id):
        return "the catalog check needs both --dify-console-url and --dify-app-id"
    access = _console_access(args)
    if access is None:
        return ""
    how = access.how()
    if not how:
        return (f"the catalog check needs a sign-in: {args.dify_console_email_env} and "
                f"{args.dify_console_password_env} (the web UI's login), or {args.dify_admin_key_env} with "
                f"--dify-workspace-id, or {args.dify_console_token_env}")
    if how == "admin key" and not access.workspace_id:
        return f"{args.dify_admin_key_env} is set: the admin API key needs --dify-workspace-id (X-WORKSPACE-ID)"
    return ""


def run(args: argparse.Namespace) -> int:
    from dskit.tooling.eval import report  # noqa: PLC0415
    from dskit.tooling.eval.runner import total_turns  # noqa: PLC0415
    from dskit.tooling.eval.suite import SuiteError, load_suites  # noqa: PLC0415
    from dskit.tooling.llm.options import OptionError, client_from_args  # noqa: PLC0415

    if args.target == "dify":
        if args.answers_nothing:
            return _fail("--answers-nothing scores the engine or a Chatflow here, not a deployed app")
        if not args.dify_url:
            return _fail("--target dify needs --dify-url (the app's Service API base URL)")
        if _console_problem(args):
            return _fail(_console_problem(args))
        client = None
    elif args.answers_nothing:
        if args.base_url or args.replay or args.record or args.cache:
            return _fail("--answers-nothing runs without a model: leave out --base-url, --replay, --record and --cache")
        from dskit.tooling.llm.nothing import NothingClient  # noqa: PLC0415

        client = NothingClient()
    else:
        try:
            client = client_from_args(args)
        except OptionError as error:
            return _fail(str(error))
    if args.parallel < 1 or args.runs < 1 or (args.repeat is not None and args.repeat < 1):
        return _fail("--parallel, --runs and --repeat must be at least 1")
    if args.runs > 1 and (args.cache or args.replay):
        return _fail("--runs N asks the model N times: with --cache or --replay every run after the first would "
                     "be the first again (use --record FILE: one cassette per run)")
    try:
        suites = load_suites([str(p) for p in args.suites] or None)
    except SuiteError as error:
        return _fail(str(error))
    if args.ungrounded:
        for suite in suites:
            suite.catalog_data = {**suite.catalog_data,
                                  "policy": {**(suite.catalog_data.get("policy") or {}), "ungrounded": args.ungrounded}}
    if args.suite:
        suites = [s for s in suites if s.name in set(args.suite)]
        if not suites:
            return _fail(f"no suite named {', '.join(args.suite)}")
    try:
        targets = _runs(args, client)
    except (OSError, ValueError) as error:
        return _fail(str(error))
    meta = _meta(args, client)
    if args.runs > 1:
        meta["runs"] = args.runs
    runs = []
    with report.TraceWriter(args.trace) as trace:  # each turn written as it ends: a long run can be followed
        for index, (label, target) in enumerate(targets):
            repeats = []
            for number in range(1, args.runs + 1):
                if number > 1 or args.runs > 1:  # a fresh client (its own cassette) and target for every run
                    try:
                        target = _runs(args, _run_client(args, client, number))[index][1]
                    except (OSError, ValueError) as error:
                        return _fail(str(error))
                sink = trace.sink(label if args.runs == 1 else f"{label}#{number}")
                repeats.append(_run_one(label, target, suites, args, total_turns(suites, args.repeat), sink))
            runs.append(_combine(repeats, args))
    if not args.json and not any(_scored(run) for run in runs):
        return _nothing_ran(runs)
    if args.report:
        page = report.write_report(runs, meta, args.report)
        if not args.json:
            print(f"report: {page}")
    if args.json:
        print(json.dumps(report.as_json(runs, meta), ensure_ascii=False))
    else:
        report.print_table(runs, meta)
    # 1 also when a catalog check that was asked for could not run: its figures are not what was asked
    return 1 if any(run.errors() or run.target.get("catalog_check_failed") for run in runs) else 0


def _run_client(args: argparse.Namespace, client: Any, number: int) -> Any:
    """The client of run ``number`` of ``--runs``: with ``--record FILE`` one that records into
    FILE.run<number> (a run's answers must not answer the next run), else a fresh one like ``client``."""
    if client is None or not args.record:
        return client
    from dskit.tooling.llm.options import client_from_args  # noqa: PLC0415

    return client_from_args(argparse.Namespace(**{**vars(args), "record": run_cassette(args.record, number)}))


def run_cassette(path: Path, number: int) -> Path:
    """Where run ``number`` of ``--runs`` records: ``engine.jsonl`` -> ``engine.run2.jsonl``."""
    suffixes = "".join(path.suffixes)
    return path.with_name(path.name[: len(path.name) - len(suffixes)] + f".run{number}" + suffixes)


def _combine(repeats: list, args: argparse.Namespace) -> Any:
    """The runs of one target as one (the median run, with the spread); with --record the median run's
    cassette is copied to the --record file: a replay gives the median figures, never the best."""
    import shutil  # noqa: PLC0415

    from dskit.tooling.eval.runner import combine_runs, median_index  # noqa: PLC0415

    if len(repeats) == 1:
        return repeats[0]
    if args.record:
        median = run_cassette(args.record, median_index(repeats) + 1)
        if median.exists():
            shutil.copyfile(median, args.record)
    return combine_runs(repeats)


def _scored(run: Any) -> bool:
    """Whether any turn of ``run`` reached the model and was scored (not failed, not skipped)."""
    return any(not turn.error for conversation in run.conversations for turn in conversation.turns)


def _nothing_ran(runs: list) -> int:
    """No turn could be run (the endpoint is down, the key is wrong): a table would be all dashes, so
    say only why, once per distinct cause (the same error on every conversation is one line)."""
    for run in runs:
        causes = list(dict.fromkeys(re.sub(r"^.*? \(run \d+\): (turn \d+: )?", "", line) for line in run.errors()))
        count = len(run.conversations)
        for cause in causes or ["no conversation to run"]:
            print(f"dskit eval: {run.label}: no turn could be run ({count} conversation"
                  f"{'s' if count != 1 else ''}): {cause}", file=sys.stderr)
    return 1


def _run_one(label: str, target: Any, suites: list, args: argparse.Namespace, total: int, sink: Any) -> Any:
    from dskit.tooling.eval.runner import run_suites  # noqa: PLC0415

    from dskit.tooling.progress import counted  # noqa: PLC0415

    if args.quiet or args.json or not sys.stderr.isatty():
        return run_suites(target, suites, label=label, repeat=args.repeat, parallel=args.parallel, sink=sink)
    with counted(label, total, transient=False) as bar:
        return run_suites(target, suites, label=label, repeat=args.repeat, parallel=args.parallel,
                          progress=bar.done, sink=sink)
