#!/usr/bin/env bash
# README command 1: set up (first run only) and run `crustcore demo`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec node packages/crustcore/dist/crustcore.cjs demo "$@"
