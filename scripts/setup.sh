#!/usr/bin/env bash
# One-command set-up: a Python 3.12 virtual environment in .venv with the engine, the tooling and
# the test dependencies. Run from anywhere; idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

find_python() {
  if command -v python3.12 >/dev/null 2>&1 && python3.12 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))' 2>/dev/null; then
    echo python3.12; return
  fi
  if command -v pyenv >/dev/null 2>&1; then
    local v; v=$(pyenv versions --bare 2>/dev/null | grep -E '^3\.12(\.[0-9]+)?$' | sort -V | tail -n 1 || true)
    if [ -n "$v" ]; then echo "$(pyenv root)/versions/$v/bin/python3.12"; return; fi
  fi
  for p in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/local/bin/python3.12; do
    [ -x "$p" ] && { echo "$p"; return; }
  done
  echo "no Python 3.12 found: install it (pyenv install 3.12) and run again" >&2
  exit 1
}

PY=$(find_python)
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then
  rm -rf .venv
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
# graphon without its ~900 MB of document parsers; `pip install -e .` alone leaves it out, and then
# `dskit demo`, `dskit chat` and the DSL tests cannot run Dify's engine.
.venv/bin/python -m pip install -q --no-deps graphon==0.8.0
cat <<'NEXT'

ready: .venv with the engine, the tooling, the test dependencies and graphon 0.8.0 (Dify's workflow engine).
next:
  .venv/bin/dskit demo                       # the restaurant booking through the Chatflow, no model needed
  .venv/bin/dskit validate my_catalog.json   # your own tasks (docs/catalog.md)
  .venv/bin/dskit --help                     # every command
  .venv/bin/python -m pytest                 # the tests
NEXT
