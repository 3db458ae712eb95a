#!/usr/bin/env bash
# Runs every benchmark under benches/ (or the ones named) and prints their
# tables and ratios. Benchmarks report numbers; they never fail on timing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
files=("$@")
if [ ${#files[@]} = 0 ]; then mapfile -t files < <(ls benches/*.bench.ts); fi
for f in "${files[@]}"; do
  printf '\n════ %s\n' "$f"
  node --conditions=source --import tsx "$f"
done
