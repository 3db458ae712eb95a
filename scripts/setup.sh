#!/usr/bin/env bash
# Brings a fresh machine to the state the demo and the tests need. Idempotent:
# each step checks first and does nothing when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[2m[setup]\033[0m %s\n' "$*" >&2; }

apt_install() {
  if [ "$(id -u)" != 0 ]; then
    say "missing system package(s): $* — run: sudo apt-get install -y $*"
    return 0
  fi
  if [ ! -f /tmp/.crustcore-apt-updated ]; then
    apt-get update -qq >/dev/null && touch /tmp/.crustcore-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ "${CRUSTCORE_SETUP_SYSTEM:-1}" = 1 ]; then
  need=()
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  command -v git >/dev/null 2>&1 || need+=(git)
  command -v prlimit >/dev/null 2>&1 || need+=(util-linux)
  if [ "${CRUSTCORE_SETUP_TESTS:-0}" = 1 ]; then
    command -v tmux >/dev/null 2>&1 || need+=(tmux)
    command -v rg >/dev/null 2>&1 || need+=(ripgrep)
    # packages/crustcore/test/completion: the zsh and fish completion scripts run in the real shells.
    command -v zsh >/dev/null 2>&1 || need+=(zsh)
    command -v fish >/dev/null 2>&1 || need+=(fish)
    # golden/real-python: a venv over Debian's pytest (PyPI is not reachable on CI machines).
    /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need+=(python3-pytest)
    /usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
    if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
      need+=(postgresql)
    fi
  fi
  if [ ${#need[@]} -gt 0 ]; then
    say "installing ${need[*]}"
    apt_install "${need[@]}"
  fi
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
fi

# Build every package (turbo caches unchanged ones).
say "building"
npx turbo run build --output-logs=errors-only >/dev/null
