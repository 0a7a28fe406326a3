#!/usr/bin/env bash
# Installs what a fresh clone lacks, and only what the command about to run needs:
#   scripts/ensure-deps.sh          (npm start) npm packages (among them the project's own Node 24),
#                                   the built bins (dist/), etcd
#   scripts/ensure-deps.sh --test   (npm test, .ci/run) the same, plus the tools only tests use:
#                                   etcdctl, Chromium, Prometheus (promtool), zsh, fish, php-cli,
#                                   ffmpeg, and the etcd matrix (scripts/etcd-matrix.sh)
# Runs before node_modules exists, on whatever Node and npm the machine has: `npm ci` runs on the
# system Node; everything after it runs on Node 24.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=0
case "${1:-}" in
  --test) tests=1 ;;
  "") ;;
  *) echo "usage: scripts/ensure-deps.sh [--test]" >&2; exit 2 ;;
esac

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  say "npm is required to install the project (any Node.js with npm 10 or newer will do)."
  exit 1
fi

# The project runs on Node 22.12+, and installs Node 24 for itself: the devDependency `node`
# (the npm registry's Node binaries) puts node_modules/.bin/node first on every npm script's PATH.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
  [ ! -x node_modules/.bin/node ]; then
  say "installing npm packages (npm ci)…"
  # On a system Node older than `engines` (Debian's 18 or 20), npm warns EBADENGINE for the
  # project and several packages: true, and irrelevant, since everything after this line runs
  # on the Node 24 this very install brings. Those lines are dropped; every other line is kept.
  npm ci --no-audit --no-fund 2> >(grep -v '^npm warn EBADENGINE' >&2) >&2
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

# Debian packages, installed together (one apt-get update) when missing.
missing=()
need() { # need PACKAGE COMMAND...: PACKAGE is missing when one of its commands is
  local pkg=$1 cmd
  shift
  for cmd in "$@"; do
    if ! command -v "$cmd" >/dev/null 2>&1; then
      missing+=("$pkg")
      return
    fi
  done
}
# npm start runs the newest etcd under .tools/ (the matrix's, scripts/etcd-matrix.sh) when there
# is one: Debian's etcd-server (bookworm: 3.4.23, out of support) only when there is none.
have_tools_etcd() { compgen -G ".tools/etcd-v*/etcd" >/dev/null; }
have_tools_etcd || need etcd-server etcd
if [ "$tests" = 1 ]; then
  need etcd-client etcdctl            # tests drive etcd's own CLI (snapshots, auth, the cluster helper)
  need chromium chromium              # the /ui browser tests (test/pusher/ui/) drive it through playwright-core
  need prometheus promtool prometheus # promtool checks the alert rules; one test scrapes a real Prometheus
  need zsh zsh                        # `edgectl completion zsh|fish` is checked in the real shells
  need fish fish
  need php-cli php                    # docs/origin-verification.md's PHP verifier runs under a real php-cli
  need ffmpeg ffmpeg                  # makes the HLS and DASH streams the steering player tests play
fi

# The etcd versions the tests run on (.tools/etcd-v*/; docs/development.md "The etcd matrix").
# ETCD_MATRIX_LATER=1: the caller prepares it itself (.ci/run, in the background during lint).
matrix() { if [ "$tests" = 1 ] && [ "${ETCD_MATRIX_LATER:-}" != 1 ]; then bash scripts/etcd-matrix.sh; fi; }

if [ ${#missing[@]} -eq 0 ]; then
  matrix
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  say "installing Debian's ${missing[*]}…"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  # Where systemd runs, Debian starts etcd and prometheus services; the tests start their own.
  apt-get install -y -qq "${missing[@]}" >&2
  matrix
  exit 0
fi
say "not installed: ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]})."
if [ "$tests" = 1 ]; then
  say "  chromium: the /ui and player browser tests; prometheus: the alert tests; zsh, fish: completion checks; ffmpeg: the steering player tests"
fi
if { command -v etcd >/dev/null 2>&1 || have_tools_etcd; } && command -v etcdctl >/dev/null 2>&1; then
  matrix
  exit 0
fi
say "etcd is required. Install it with one of:"
say "  Debian/Ubuntu:  sudo apt-get install etcd-server etcd-client"
say "  macOS:          brew install etcd"
say "  any Linux:      a release binary from github.com/etcd-io/etcd/releases on your PATH"
exit 1
