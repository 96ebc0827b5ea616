#!/usr/bin/env bash
# One-command set-up: a Python 3.12 virtual environment in .venv with the engine, the tooling and
# the test dependencies. Run from anywhere; idempotent.
#
# Each step says what it does and, while it runs, how long it has run and what pip is at (about a
# minute and a half on 2 cores, most of it installing the dependencies): no silent wait. pip's own
# output goes to .venv/setup.log, shown in full only when a step fails.
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

LOG=""

# step N WHAT COMMAND...: run COMMAND with its output in $LOG, showing WHAT, the seconds it has run and
# pip's latest line (each second on a terminal, every 3 seconds in a log); its output when it fails.
step() {
  local number=$1 what=$2; shift 2
  local start=$SECONDS pid status=0 last="" ticks=0 line=""
  printf -- '-- %s/4 %s\n' "$number" "$what" >>"$LOG"
  "$@" >>"$LOG" 2>&1 &
  pid=$!
  [ -t 1 ] || printf '[%s/4] %s\n' "$number" "$what"
  while kill -0 "$pid" 2>/dev/null; do
    last=$(tail -n 1 "$LOG" | tr -d '\r' | grep -v '^-- ' | cut -c1-70 || true)
    if [ -t 1 ]; then  # one line, cut to the terminal's width so that it never wraps
      line=$(printf '[%s/4] %s  %ds  %s' "$number" "$what" $((SECONDS - start)) "$last")
      printf '\r\033[K%s' "${line:0:$(($(tput cols 2>/dev/null || echo 80) - 1))}"
    elif [ "$ticks" -gt 0 ] && [ $((ticks % 3)) -eq 0 ]; then
      printf '      %ds  %s\n' $((SECONDS - start)) "$last"
    fi
    sleep 1
    ticks=$((ticks + 1))
  done
  [ -t 1 ] && printf '\r\033[K'
  wait "$pid" || status=$?
  if [ "$status" -ne 0 ]; then
    printf '[%s/4] %s: failed (exit status %s); its output (%s):\n' "$number" "$what" "$status" "$LOG" >&2
    sed -n "/^-- $number\/4 /,\$p" "$LOG" >&2
    exit "$status"
  fi
  printf '[%s/4] %s: done in %ds\n' "$number" "$what" $((SECONDS - start))
}

PY=$(find_python)
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; sys.exit(sys.version_info[:2] != (3, 12))'; then
  rm -rf .venv
  mkdir -p .venv
  LOG=.venv/setup.log
  : >"$LOG"
  step 1 "a Python 3.12 virtual environment in .venv" "$PY" -m venv .venv
else
  LOG=.venv/setup.log
  : >"$LOG"
  echo "[1/4] a Python 3.12 virtual environment in .venv: already there"
fi
step 2 "the latest pip" .venv/bin/python -m pip install --progress-bar off --upgrade pip
step 3 "the engine, the tooling and the test dependencies" \
  .venv/bin/python -m pip install --progress-bar off -e '.[dev]'
# graphon without its ~900 MB of document parsers; `pip install -e .` alone leaves it out, and then
# `dskit demo`, `dskit chat` and the DSL tests cannot run Dify's engine.
step 4 "graphon 0.8.0, Dify's workflow engine (without its document parsers)" \
  .venv/bin/python -m pip install --progress-bar off --no-deps graphon==0.8.0
cat <<'NEXT'

ready: .venv with the engine, the tooling, the test dependencies and graphon 0.8.0 (Dify's workflow engine).
next:
  .venv/bin/dskit demo                       # the restaurant booking through the Chatflow, no model needed
  .venv/bin/dskit validate my_catalog.json   # your own tasks (docs/catalog.md)
  .venv/bin/dskit --help                     # every command
  .venv/bin/python -m pytest                 # the tests
NEXT
