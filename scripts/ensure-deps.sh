#!/usr/bin/env bash
# Installs what a fresh clone lacks: npm packages (among them the project's own Node 24), the
# built bins (dist/), then an etcd binary. Runs before node_modules exists, on whatever Node and
# npm the machine has: `npm ci` runs on the system Node; everything after it runs on Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  say "npm is required to install the project (any Node.js with npm 10 or newer will do)."
  exit 1
fi

# The project runs on Node 22.12+, and installs Node 24 for itself: the devDependency `node`
# (the npm registry's Node binaries) puts node_modules/.bin/node first on every npm script's PATH.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
  [ ! -x node_modules/.bin/node ]; then
  if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=12)?0:1)' 2>/dev/null; then
    say "system Node $(node --version 2>/dev/null || echo '(none)') is older than 22.12: npm ci installs Node 24 for this project (expect EBADENGINE warnings while it runs on the old one)"
  fi
  say "installing npm packages (npm ci)…"
  npm ci --no-audit --no-fund >&2
  hash -r
fi

NODE=node_modules/.bin/node
if ! "$NODE" -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 0 : 1)' 2>/dev/null; then
  say "node_modules/.bin/node (the devDependency \`node\`) is missing or broken: its install script"
  say "downloads the Node binary from the npm registry. Run \`rm -rf node_modules && npm ci\` and check its output."
  exit 1
fi

# dist/ is what the bins run; rebuilding unchanged sources gives identical files (~0.2 s).
"$NODE" --import tsx scripts/build.ts

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

# `edgectl completion zsh|fish` is checked in the real shells (test/cli/completion.test.ts).
if ! command -v zsh >/dev/null 2>&1 || ! command -v fish >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "zsh or fish not found: installing Debian's (for the completion tests)…"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq zsh fish >&2
  else
    say "zsh or fish not found: the completion tests then check those scripts' form only."
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
