#!/usr/bin/env bash
# Sets up etcd RBAC for edge-router (docs/reference.md "etcd keys", "Running it"). Run once per
# cluster, as an operator, with etcdctl v3 pointed at the cluster over TLS:
#
#   ETCDCTL_ENDPOINTS=https://etcd-1.internal:2379 \
#   ETCD_CACERT=/etc/etcd/ca.pem ETCD_CERT=/etc/etcd/admin.pem ETCD_KEY=/etc/etcd/admin-key.pem \
#   POOLS="fra-1 ams-1 par-1" bash deploy/etcd-auth.sh [--out-dir DIR] [--insecure]
#
# Creates:
#   root            the admin user (required before `auth enable`)
#   edge-pusher     read-only on the routing prefix; read-write on the election prefix
#   edgectl         read-write on the routing prefix (apply, boost, unboost, lock/apply, epoch)
#                   and on the audit prefix (apply, move and rollback write a record there in
#                   the epoch's transaction and prune old ones; history and rollback read it)
#   edge-health-P   one per pool: may write only its own health keys, health/P and its checkers'
#                   health/P/NAME (`edgectl heartbeat P --checker NAME`), and read pool/P
#   edge-observer   the viewer observer (edgectl observe): writes observed/ keys and, as the
#                   canary's judge, canary/judgement; ends a canary as edgectl would (lock/apply,
#                   epoch, canary/current, the intent families a canary changes, an audit record)
#
# Passwords come from ROOT_PASSWORD, PUSHER_PASSWORD, EDGECTL_PASSWORD, OBSERVER_PASSWORD and
# HEALTH_PASSWORD_<pool with - as _> (e.g. HEALTH_PASSWORD_fra_1) in the environment; any unset
# one is generated and written to DIR/<user>.password (mode 0600, DIR mode 0700, default ./etcd-credentials), never
# to the terminal. Passwords never appear on a command line (where `ps` shows them to every
# user): etcdctl reads new ones from stdin (`user add --interactive=false`) and authenticates
# from ETCDCTL_USER / ETCDCTL_PASSWORD in its environment.
#
# Every endpoint must be https:// (the passwords cross the network); --insecure allows http://
# for a loopback test cluster only.
#
# Use etcd 3.5.33+, 3.6.14+ or 3.7.1+: older releases (Debian's 3.4.23 among them) let a nested
# transaction, PrevKv or a lease inside a transaction, or a from-key watch bypass these grants.
# Safe to re-run when a run stopped before `auth enable`: an existing user or role makes `add`
# fail, which is reported and skipped (an existing user keeps its password; no file is written).
set -euo pipefail

die() {
  echo "etcd-auth.sh: $*" >&2
  exit 2
}

INSECURE=0
OUT_DIR="./etcd-credentials"
while [ $# -gt 0 ]; do
  case "$1" in
    --insecure) INSECURE=1 ;;
    --out-dir) [ $# -ge 2 ] || die "--out-dir needs a directory"; OUT_DIR="$2"; shift ;;
    --out-dir=*) OUT_DIR="${1#*=}" ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument \"$1\" (see --help)" ;;
  esac
  shift
done

[ -n "${ETCDCTL_ENDPOINTS:-}" ] || die "set ETCDCTL_ENDPOINTS to the cluster (https://host:2379,…)"
IFS=, read -ra ENDPOINT_LIST <<<"$ETCDCTL_ENDPOINTS"
for ep in "${ENDPOINT_LIST[@]}"; do
  case "$ep" in
    https://*) ;;
    *)
      [ "$INSECURE" = 1 ] ||
        die "endpoint \"$ep\" is not https://: the passwords would cross the network in clear (--insecure allows it for a loopback test cluster)"
      ;;
  esac
done

PREFIX="${ROUTING_PREFIX:-/edge/routing/v1/}"
AUDIT_PREFIX="${AUDIT_PREFIX:-/edge/audit/v1/}"
ELECTION_PREFIX="${PUSHER_ELECTION_PREFIX:-/edge/pusher/v1/}"
POOLS="${POOLS:-fra-1 ams-1 par-1}"

# TLS flags: the cluster's CA and an admin client certificate (paths, not secrets).
TLS=()
[ -n "${ETCD_CACERT:-}" ] && TLS+=(--cacert "$ETCD_CACERT") # e.g. /etc/etcd/ca.pem
[ -n "${ETCD_CERT:-}" ] && TLS+=(--cert "$ETCD_CERT")       # e.g. /etc/etcd/admin.pem
[ -n "${ETCD_KEY:-}" ] && TLS+=(--key "$ETCD_KEY")          # e.g. /etc/etcd/admin-key.pem

# Nobody's credentials leak in from the operator's shell; ctl_root sets root's for one call.
# Every supported etcdctl speaks v3 by default; a stray ETCDCTL_API from the shell is dropped.
unset ETCDCTL_USER ETCDCTL_PASSWORD ETCDCTL_API
umask 077

ctl() { etcdctl "${TLS[@]}" "$@"; }
# Once auth is on, every call authenticates as root, through the environment.
ctl_root() { ETCDCTL_USER=root ETCDCTL_PASSWORD="$ROOT_PASSWORD" etcdctl "${TLS[@]}" "$@"; }
gen() { head -c 18 /dev/urandom | base64 | tr -d '/+='; }
try() { "$@" || echo "  (skipped: $*)" >&2; }

GENERATED=()
# password VAR: the value of VAR, or a fresh random one.
password() {
  local var="$1"
  if [ -n "${!var:-}" ]; then
    printf '%s' "${!var}"
  else
    gen
  fi
}

# add_user NAME PASSWORD WAS_GENERATED: creates the user, the password on etcdctl's stdin; a
# generated password is kept in OUT_DIR only when the user was really created with it.
add_user() {
  local name="$1" pw="$2" generated="$3"
  if printf '%s\n' "$pw" | ctl user add "$name" --interactive=false >/dev/null; then
    echo "user $name created"
    if [ "$generated" = 1 ]; then
      mkdir -p "$OUT_DIR"
      chmod 0700 "$OUT_DIR"
      (umask 077 && printf '%s\n' "$pw" >"$OUT_DIR/$name.password")
      chmod 0600 "$OUT_DIR/$name.password"
      GENERATED+=("$OUT_DIR/$name.password")
    fi
  else
    echo "  (skipped: user $name exists or could not be created; its password is unchanged)" >&2
  fi
}

# pick VAR: prints 1 when VAR is unset (so its password is generated), else 0.
pick() { if [ -n "${!1:-}" ]; then echo 0; else echo 1; fi; }

ROOT_GEN=$(pick ROOT_PASSWORD)
ROOT_PASSWORD="$(password ROOT_PASSWORD)"

# 1. root user with the built-in root role (auth cannot be enabled without it).
add_user root "$ROOT_PASSWORD" "$ROOT_GEN"
try ctl user grant-role root root >/dev/null

# 2. the pusher: read the routing prefix, read-write its election key prefix.
try ctl role add edge-pusher >/dev/null
ctl role grant-permission edge-pusher --prefix=true read "$PREFIX" >/dev/null
ctl role grant-permission edge-pusher --prefix=true readwrite "$ELECTION_PREFIX" >/dev/null
add_user edge-pusher "$(password PUSHER_PASSWORD)" "$(pick PUSHER_PASSWORD)"
ctl user grant-role edge-pusher edge-pusher >/dev/null

# 3. edgectl (operators, CI): read-write on the routing prefix and on the audit records (the
#    pusher gets no grant there: it never reads them).
try ctl role add edgectl >/dev/null
ctl role grant-permission edgectl --prefix=true readwrite "$PREFIX" >/dev/null
ctl role grant-permission edgectl --prefix=true readwrite "$AUDIT_PREFIX" >/dev/null
add_user edgectl "$(password EDGECTL_PASSWORD)" "$(pick EDGECTL_PASSWORD)"
ctl user grant-role edgectl edgectl >/dev/null

# 4. one health role per pool: its own health keys only. The exact key health/P and the prefix
#    health/P/ (its checkers), never the prefix health/P, which would also cover pool P0's keys.
for pool in $POOLS; do
  var="HEALTH_PASSWORD_${pool//-/_}"
  try ctl role add "edge-health-$pool" >/dev/null
  ctl role grant-permission "edge-health-$pool" readwrite "${PREFIX}health/${pool}" >/dev/null
  ctl role grant-permission "edge-health-$pool" --prefix=true readwrite "${PREFIX}health/${pool}/" >/dev/null
  ctl role grant-permission "edge-health-$pool" read "${PREFIX}pool/${pool}" >/dev/null
  add_user "edge-health-$pool" "$(password "$var")" "$(pick "$var")"
  ctl user grant-role "edge-health-$pool" "edge-health-$pool" >/dev/null
done

# 5. the viewer observer: its observed/ keys (under its own lease); as the canary's judge
#    (docs/reference.md §13) it reads the prefix and ends a canary through the apply commit:
#    lock/apply, epoch, canary/, an audit record, and on promotion the canary's own changes to
#    pool/, country/ and continent/ (never fence/, health/ or override/).
try ctl role add edge-observer >/dev/null
ctl role grant-permission edge-observer --prefix=true read "$PREFIX" >/dev/null
ctl role grant-permission edge-observer --prefix=true readwrite "${PREFIX}observed/" >/dev/null
ctl role grant-permission edge-observer --prefix=true readwrite "${PREFIX}canary/" >/dev/null
ctl role grant-permission edge-observer readwrite "${PREFIX}epoch" >/dev/null
ctl role grant-permission edge-observer readwrite "${PREFIX}lock/apply" >/dev/null
for family in pool country continent; do
  ctl role grant-permission edge-observer --prefix=true readwrite "${PREFIX}${family}/" >/dev/null
done
ctl role grant-permission edge-observer --prefix=true readwrite "$AUDIT_PREFIX" >/dev/null
add_user edge-observer "$(password OBSERVER_PASSWORD)" "$(pick OBSERVER_PASSWORD)"
ctl user grant-role edge-observer edge-observer >/dev/null

# 6. switch auth on; from here every request needs a user (or a client cert whose CN is one).
ctl auth enable
ctl_root role list >/dev/null

if [ "${#GENERATED[@]}" -gt 0 ]; then
  echo "generated passwords (mode 0600; move them into the units' credential files or your"
  echo "secret manager, then delete them):"
  printf '  %s\n' "${GENERATED[@]}"
fi
