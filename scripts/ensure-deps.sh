#!/usr/bin/env bash
# Installs what a fresh clone lacks: npm packages, then an etcd binary. Runs before node_modules exists.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

# package.json engines: Node 20.19+ (tsx, wrangler 4 and Miniflare need it).
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=19)?0:1)'; then
  say "Node.js 20.19 or newer is required (found $(node --version)); install it from nodejs.org or your distribution."
  exit 1
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages (npm ci)…"
  npm ci --no-audit --no-fund >&2
fi

# The /ui browser tests (test/ui/) drive Debian's Chromium through playwright-core.
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "chromium not found: installing Debian's chromium (for the /ui browser tests)…"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq chromium >&2
  else
    say "chromium not found: the /ui browser tests need it (Debian/Ubuntu: sudo apt-get install chromium)."
  fi
fi

if command -v etcd >/dev/null 2>&1 && command -v etcdctl >/dev/null 2>&1; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  say "etcd not found: installing Debian's etcd-server and etcd-client…"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq etcd-server etcd-client >&2
  # Debian starts an etcd service on install where systemd runs; we start our own per test.
  exit 0
fi
say "etcd is required but not installed. Install it with one of:"
say "  Debian/Ubuntu:  sudo apt-get install etcd-server etcd-client"
say "  macOS:          brew install etcd"
say "  any Linux:      a release binary from github.com/etcd-io/etcd/releases on your PATH"
exit 1
