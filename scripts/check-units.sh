#!/usr/bin/env bash
# CI: the systemd units in deploy/ verify, and each stays sandboxed: `systemd-analyze security`
# rates its exposure at most MAX_EXPOSURE (0 = fully locked down, 10 = unprotected).
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_EXPOSURE=2.0

if ! command -v systemd-analyze >/dev/null 2>&1; then
  echo "check-units: systemd-analyze is required (Debian/Ubuntu: apt-get install systemd)" >&2
  exit 1
fi

# A template is checked as instances of it, as systemd would run them: the heartbeat's as a pool's
# one heartbeat and as one of a pool's checkers.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp deploy/edge-pusher.service "$work/edge-pusher.service"
cp deploy/edge-heartbeat@.service "$work/edge-heartbeat@fra-1.service"
cp deploy/edge-heartbeat@.service "$work/edge-heartbeat@fra-1_site-a.service"
cp deploy/edge-snapshot.service "$work/edge-snapshot.service"
cp deploy/edge-observer.service "$work/edge-observer.service"

status=0
for unit in "$work/edge-pusher.service" "$work/edge-heartbeat@fra-1.service" \
  "$work/edge-heartbeat@fra-1_site-a.service" "$work/edge-snapshot.service" \
  "$work/edge-observer.service"; do
  name=$(basename "$unit")
  if ! out=$(systemd-analyze verify "$unit" 2>&1) || [ -n "$out" ]; then
    printf 'check-units: %s does not verify:\n%s\n' "$name" "$out" >&2
    status=1
  fi
  report=$(systemd-analyze security --offline=yes --no-pager "$unit" 2>&1 || true)
  exposure=$(printf '%s\n' "$report" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
  if [ -z "$exposure" ]; then
    printf 'check-units: no exposure level for %s:\n%s\n' "$name" "$report" >&2
    status=1
  elif awk -v e="$exposure" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(e > m) }'; then
    printf 'check-units: %s exposure %s is above %s:\n%s\n' "$name" "$exposure" "$MAX_EXPOSURE" \
      "$(printf '%s\n' "$report" | grep '✗')" >&2
    status=1
  else
    echo "check-units: $name verifies; exposure $exposure (at most $MAX_EXPOSURE)"
  fi
done
exit "$status"
