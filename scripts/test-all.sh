#!/usr/bin/env bash
# README command 2: set up and run every test and check, then print one line:
#   tests: N passed, N failed[, N skipped]
# Each repository-wide check (type-check, lint, dependency rules, size budget, tidy)
# counts as one test next to the vitest tests.
set -uo pipefail
cd "$(dirname "$0")/.."

CRUSTCORE_SETUP_TESTS=1 bash scripts/setup.sh || { echo "setup failed"; echo "tests: 0 passed, 1 failed"; exit 1; }

passed=0
failed=0
skipped=0
failures=()

check() {
  local name=$1; shift
  printf '\n── %s\n' "$name"
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$name"); fi
}

check "type-check (tsc)" npx tsc -p tsconfig.json --noEmit
check "lint (biome)" npx biome check .
check "dependency rules (dependency-cruiser)" npx depcruise --config .dependency-cruiser.cjs packages
check "size budget (size-limit)" npx size-limit
check "tidy (xtask tidy)" npm run --silent xtask -- tidy

summary=$(mktemp)
printf '\n── vitest\n'
# setup.sh just built every package: golden tests must not rebuild the CLI under each other.
CRUSTCORE_CLI_BUILT=1 CRUSTCORE_SUMMARY_FILE="$summary" npx vitest run
vitest_rc=$?
if [ -s "$summary" ]; then
  read -r vp vf vs < <(node -e 'const s=JSON.parse(require("node:fs").readFileSync(process.argv[1],"utf8"));console.log(s.passed,s.failed,s.skipped)' "$summary")
  passed=$((passed + vp)); failed=$((failed + vf)); skipped=$((skipped + vs))
  if [ "$vitest_rc" != 0 ] && [ "$vf" = 0 ]; then failed=$((failed + 1)); failures+=("vitest exited $vitest_rc"); fi
else
  failed=$((failed + 1)); failures+=("vitest produced no summary (exit $vitest_rc)")
fi
rm -f "$summary"

if [ ${#failures[@]} -gt 0 ]; then printf '\nfailed checks: %s\n' "${failures[*]}"; fi
line="tests: $passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ "$failed" = 0 ]
