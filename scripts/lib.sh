#!/usr/bin/env bash
#! Shared shell pieces for the project's scripts: timed steps and common paths.
# Sourced, never run. Every script prints each step and how long it took.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export REMIND_CACHE="${REMIND_CACHE:-$HOME/.cache/remind}"
export PATH="$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
mkdir -p "$REMIND_CACHE"

# step NAME CMD...: run CMD, print its wall time; a failure names the step.
step() {
  local name="$1"; shift
  local t0; t0=$(date +%s)
  echo "==> $name"
  if "$@"; then
    echo "<== $name: ok in $(( $(date +%s) - t0 ))s"
  else
    local rc=$?
    echo "<== $name: FAILED (exit $rc) after $(( $(date +%s) - t0 ))s" >&2
    return "$rc"
  fi
}
