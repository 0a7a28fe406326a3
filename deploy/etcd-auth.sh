#!/usr/bin/env bash
# Sets up etcd RBAC for edge-router (SPEC §2, §7). Run once per cluster, as an operator, with
# etcdctl v3 pointed at the cluster over TLS:
#
#   ETCDCTL_ENDPOINTS=https://etcd-1.internal:2379 \
#   ETCD_CACERT=/etc/etcd/ca.pem ETCD_CERT=/etc/etcd/admin.pem ETCD_KEY=/etc/etcd/admin-key.pem \
#   POOLS="fra-1 ams-1 par-1" bash deploy/etcd-auth.sh
#
# Creates:
#   root            the admin user (required before `auth enable`)
#   edge-pusher     read-only on the routing prefix; read-write on the election prefix
#   edgectl         read-write on the routing prefix (apply, boost, unboost, lock/apply, epoch)
#   edge-health-P   one per pool: may write only its own health/P key (and read pool/P)
# Passwords come from ROOT_PASSWORD, PUSHER_PASSWORD, EDGECTL_PASSWORD and HEALTH_PASSWORD_<pool
# with - as _> (e.g. HEALTH_PASSWORD_fra_1); any unset one is generated and printed once.
#
# Use etcd 3.4.42+, 3.5.28+ or 3.6.9+: older releases (Debian's 3.4.23 among them) let a nested
# transaction bypass these permissions.
# Idempotent enough to re-run: existing users/roles make `add` fail, which is reported and skipped.
set -euo pipefail

PREFIX="${ROUTING_PREFIX:-/edge/routing/v1/}"
ELECTION_PREFIX="${PUSHER_ELECTION_PREFIX:-/edge/pusher/v1/}"
POOLS="${POOLS:-fra-1 ams-1 par-1}"

# TLS flags: placeholders for the cluster's CA and an admin client certificate.
TLS=()
[ -n "${ETCD_CACERT:-}" ] && TLS+=(--cacert "$ETCD_CACERT")   # e.g. /etc/etcd/ca.pem
[ -n "${ETCD_CERT:-}" ] && TLS+=(--cert "$ETCD_CERT")         # e.g. /etc/etcd/admin.pem
[ -n "${ETCD_KEY:-}" ] && TLS+=(--key "$ETCD_KEY")            # e.g. /etc/etcd/admin-key.pem

export ETCDCTL_API=3
ctl() { etcdctl "${TLS[@]}" "$@"; }
# Once auth is on, every call authenticates as root.
ctl_root() { etcdctl "${TLS[@]}" --user "root:${ROOT_PASSWORD}" "$@"; }
gen() { head -c 18 /dev/urandom | base64 | tr -d '/+='; }
try() { "$@" || echo "  (skipped: $*)" >&2; }

ROOT_PASSWORD="${ROOT_PASSWORD:-$(gen)}"
PUSHER_PASSWORD="${PUSHER_PASSWORD:-$(gen)}"
EDGECTL_PASSWORD="${EDGECTL_PASSWORD:-$(gen)}"

# 1. root user with the built-in root role (auth cannot be enabled without it).
try ctl user add root --new-user-password "$ROOT_PASSWORD"
try ctl user grant-role root root

# 2. the pusher: read the routing prefix, read-write its election key prefix.
try ctl role add edge-pusher
ctl role grant-permission edge-pusher --prefix=true read "$PREFIX"
ctl role grant-permission edge-pusher --prefix=true readwrite "$ELECTION_PREFIX"
try ctl user add edge-pusher --new-user-password "$PUSHER_PASSWORD"
ctl user grant-role edge-pusher edge-pusher

# 3. edgectl (operators, CI): read-write on the routing prefix.
try ctl role add edgectl
ctl role grant-permission edgectl --prefix=true readwrite "$PREFIX"
try ctl user add edgectl --new-user-password "$EDGECTL_PASSWORD"
ctl user grant-role edgectl edgectl

# 4. one health role per pool: its own health key only (exact key, not a prefix).
for pool in $POOLS; do
  var="HEALTH_PASSWORD_${pool//-/_}"
  pw="${!var:-$(gen)}"
  try ctl role add "edge-health-$pool"
  ctl role grant-permission "edge-health-$pool" readwrite "${PREFIX}health/${pool}"
  ctl role grant-permission "edge-health-$pool" read "${PREFIX}pool/${pool}"
  try ctl user add "edge-health-$pool" --new-user-password "$pw"
  ctl user grant-role "edge-health-$pool" "edge-health-$pool"
  echo "edge-health-$pool password: $pw"
done

# 5. switch auth on; from here every request needs a user (or a client cert whose CN is one).
ctl auth enable
ctl_root role list >/dev/null

echo "root password: $ROOT_PASSWORD"
echo "edge-pusher password: $PUSHER_PASSWORD"
echo "edgectl password: $EDGECTL_PASSWORD"
echo "Store them in /etc/edge-router/*.env (mode 0640) or your secret manager; this is the only time they are shown."
