#!/usr/bin/env bash
# Sets up etcd RBAC for edge-router (docs/reference.md "etcd keys", "Running it";
# deploy/README.md step 1). Run as an operator, with etcdctl v3 pointed at the cluster over TLS:
#
#   ETCDCTL_ENDPOINTS=https://etcd-1.internal:2379 \
#   ETCD_CACERT=/etc/etcd/ca.pem ETCD_CERT=/etc/etcd/admin.pem ETCD_KEY=/etc/etcd/admin-key.pem \
#   POOLS="fra-1 ams-1 par-1" bash deploy/etcd-auth.sh [--enable-auth] [--cert-users]
#       [--dry-run] [--out-dir DIR] [--insecure]
#
# First it reads the cluster (is auth on, which users and roles exist), prints every change it
# will make, and only then makes them. --dry-run stops after printing.
#
# An existing cluster, auth on (a cluster other applications share): it authenticates as the
# admin from the start, as ADMIN_USER (default root) with ROOT_PASSWORD, or, with ROOT_PASSWORD
# unset, by the client certificate ETCD_CERT whose common name is a user with the root role. It
# adds edge-router's roles and users beside the others and changes nothing else.
#
# Auth off: it never turns auth on unless --enable-auth is given. Without it the roles and users
# are created but not enforced, and it says so. With it (a fresh cluster, or one whose every other
# client already has a user) it also creates root, then enables auth: from then on every client
# needs a user or a certificate whose common name is one. The plan lists the users already there.
#
# Creates:
#   root            the admin user (only with --enable-auth, when missing: auth needs it)
#   edge-pusher     read-only on the routing prefix; read-write on the election prefix
#   edgectl         read-write on the routing prefix (apply, boost, unboost, lock/apply, epoch)
#                   and on the audit prefix (apply, move and rollback write a record there in
#                   the epoch's transaction and prune old ones; history and rollback read it)
#   edge-health-P   one per pool: may write only its own health keys, health/P and its checkers'
#                   health/P/NAME (`edgectl heartbeat P --checker NAME`), and read pool/P
#   edge-observer   the viewer observer (edgectl observe): writes observed/ keys and, as the
#                   canary's judge, canary/judgement; ends a canary as edgectl would (lock/apply,
#                   epoch, canary/current, the intent families a canary changes, an audit record)
# A user or role that exists is kept (an existing user keeps its password); its grants are added.
#
# Passwords come from ROOT_PASSWORD, PUSHER_PASSWORD, EDGECTL_PASSWORD, OBSERVER_PASSWORD and
# HEALTH_PASSWORD_<pool with - as _> (e.g. HEALTH_PASSWORD_fra_1) in the environment; any unset
# one is generated and written to DIR/<user>.password (mode 0600, DIR mode 0700, default ./etcd-credentials), never
# to the terminal. Passwords never appear on a command line (where `ps` shows them to every
# user): etcdctl reads new ones from stdin (`user add --interactive=false`) and authenticates
# from ETCDCTL_USER / ETCDCTL_PASSWORD in its environment.
#
# --cert-users: the users get no password (`user add --no-password`); each service authenticates
# with a client certificate whose common name is its user name (edge-pusher, edgectl,
# edge-health-P, edge-observer), as etcd's docs recommend. The cluster must run with
# --client-cert-auth and a --trusted-ca-file that signed those certificates.
#
# Every endpoint must be https:// (the passwords cross the network); --insecure allows http://
# for a loopback test cluster only.
#
# Use etcd 3.5.33+, 3.6.14+ or 3.7.1+: older releases (Debian's 3.4.23 among them) let a nested
# transaction, PrevKv or a lease inside a transaction, or a from-key watch bypass these grants.
# Safe to re-run: what exists is kept, and the plan says so.
set -euo pipefail

die() {
  echo "etcd-auth.sh: $*" >&2
  exit 2
}

INSECURE=0
ENABLE_AUTH=0
CERT_USERS=0
DRY_RUN=0
OUT_DIR="./etcd-credentials"
while [ $# -gt 0 ]; do
  case "$1" in
    --insecure) INSECURE=1 ;;
    --enable-auth) ENABLE_AUTH=1 ;;
    --cert-users) CERT_USERS=1 ;;
    --dry-run) DRY_RUN=1 ;;
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
ADMIN_USER="${ADMIN_USER:-root}"

# TLS flags: the cluster's CA and an admin client certificate (paths, not secrets).
TLS=()
[ -n "${ETCD_CACERT:-}" ] && TLS+=(--cacert "$ETCD_CACERT") # e.g. /etc/etcd/ca.pem
[ -n "${ETCD_CERT:-}" ] && TLS+=(--cert "$ETCD_CERT")       # e.g. /etc/etcd/admin.pem
[ -n "${ETCD_KEY:-}" ] && TLS+=(--key "$ETCD_KEY")          # e.g. /etc/etcd/admin-key.pem

# Nobody's credentials leak in from the operator's shell; ctl sets the admin's when it must.
# Every supported etcdctl speaks v3 by default; a stray ETCDCTL_API from the shell is dropped.
unset ETCDCTL_USER ETCDCTL_PASSWORD ETCDCTL_API
umask 077

AS_ADMIN=0
# ctl ARGS: etcdctl, as the admin (through the environment) once AS_ADMIN=1 and a password is
# given; with no password, the client certificate's common name authenticates.
ctl() {
  if [ "$AS_ADMIN" = 1 ] && [ -n "${ROOT_PASSWORD:-}" ]; then
    ETCDCTL_USER="$ADMIN_USER" ETCDCTL_PASSWORD="$ROOT_PASSWORD" etcdctl "${TLS[@]}" "$@"
  else
    etcdctl "${TLS[@]}" "$@"
  fi
}
gen() { head -c 18 /dev/urandom | base64 | tr -d '/+='; }

# 0. Read the cluster: is auth on? `auth status` answers without a user (3.5+); 3.4 has no such
#    command, so there an anonymous `user list` tells: refused for want of a user means on.
AUTH=""
if status=$(ctl auth status 2>&1); then
  case "$status" in
    *"Authentication Status: true"*) AUTH=on ;;
    *"Authentication Status: false"*) AUTH=off ;;
  esac
fi
if [ -z "$AUTH" ]; then
  if probe=$(ctl user list 2>&1); then
    AUTH=off
  else
    case "$probe" in
      *"user name is empty"* | *"permission denied"* | *"invalid auth token"*) AUTH=on ;;
      *) die "cannot read the cluster at $ETCDCTL_ENDPOINTS: $(printf '%s' "$probe" | tail -n 1)" ;;
    esac
  fi
fi

if [ "$AUTH" = on ]; then
  [ -n "${ROOT_PASSWORD:-}" ] || [ -n "${ETCD_CERT:-}" ] ||
    die "auth is on: set ROOT_PASSWORD (the password of ADMIN_USER, default root), or ETCD_CERT and ETCD_KEY of a certificate whose common name is a user with the root role"
  AS_ADMIN=1
  if ! check=$(ctl user list 2>&1); then
    if [ -n "${ROOT_PASSWORD:-}" ]; then
      die "auth is on and $ADMIN_USER could not list users (wrong password, or no root role): $(printf '%s' "$check" | tail -n 1)"
    fi
    die "auth is on and the certificate ETCD_CERT could not list users (its common name needs the root role): $(printf '%s' "$check" | tail -n 1)"
  fi
fi
USERS=" $(ctl user list | tr '\n' ' ') "
ROLES=" $(ctl role list | tr '\n' ' ') "
has_user() { [[ "$USERS" == *" $1 "* ]]; }
has_role() { [[ "$ROLES" == *" $1 "* ]]; }
# no_password NAME: whether NAME is created without a password (--cert-users; root keeps one
# when ROOT_PASSWORD is given).
no_password() { [ "$CERT_USERS" = 1 ] && ! { [ "$1" = root ] && [ -n "${ROOT_PASSWORD:-}" ]; }; }

# The plan: (kind name role-or-password-variable) per user, and each role's grants.
PLAN_USERS=()   # "name|role|password variable"
PLAN_GRANTS=()  # "role|perm|key|prefix(0/1)"
want_user() { PLAN_USERS+=("$1|$2|$3"); }
grant() { PLAN_GRANTS+=("$1|$2|$3|$4"); }

if [ "$AUTH" = off ] && [ "$ENABLE_AUTH" = 1 ]; then
  has_user root && [ -z "${ROOT_PASSWORD:-}" ] && [ -z "${ETCD_CERT:-}" ] &&
    die "user root exists: set ROOT_PASSWORD to its password (or ETCD_CERT and ETCD_KEY of a certificate whose common name is root), or this script could not work once auth is on"
  want_user root root ROOT_PASSWORD
fi
# the pusher: read the routing prefix, read-write its election key prefix
grant edge-pusher read "$PREFIX" 1
grant edge-pusher readwrite "$ELECTION_PREFIX" 1
want_user edge-pusher edge-pusher PUSHER_PASSWORD
# edgectl (operators, CI): the routing prefix and the audit records (the pusher never reads them)
grant edgectl readwrite "$PREFIX" 1
grant edgectl readwrite "$AUDIT_PREFIX" 1
want_user edgectl edgectl EDGECTL_PASSWORD
# one health role per pool: its own health keys only. The exact key health/P and the prefix
# health/P/ (its checkers), never the prefix health/P, which would also cover pool P0's keys.
for pool in $POOLS; do
  grant "edge-health-$pool" readwrite "${PREFIX}health/${pool}" 0
  grant "edge-health-$pool" readwrite "${PREFIX}health/${pool}/" 1
  grant "edge-health-$pool" read "${PREFIX}pool/${pool}" 0
  want_user "edge-health-$pool" "edge-health-$pool" "HEALTH_PASSWORD_${pool//-/_}"
done
# the viewer observer: its observed/ keys (under its own lease); as the canary's judge
# (docs/reference.md §13) it reads the prefix and ends a canary through the apply commit:
# lock/apply, epoch, canary/, an audit record, and on promotion the canary's own changes to
# pool/, country/ and continent/ (never fence/, health/ or override/)
grant edge-observer read "$PREFIX" 1
grant edge-observer readwrite "${PREFIX}observed/" 1
grant edge-observer readwrite "${PREFIX}canary/" 1
grant edge-observer readwrite "${PREFIX}epoch" 0
grant edge-observer readwrite "${PREFIX}lock/apply" 0
for family in pool country continent; do
  grant edge-observer readwrite "${PREFIX}${family}/" 1
done
grant edge-observer readwrite "$AUDIT_PREFIX" 1
want_user edge-observer edge-observer OBSERVER_PASSWORD

# Print the plan before changing anything.
if [ "$AUTH" = off ]; then
  echo "etcd at $ETCDCTL_ENDPOINTS: auth is off"
elif [ -n "${ROOT_PASSWORD:-}" ]; then
  echo "etcd at $ETCDCTL_ENDPOINTS: auth is on; working as $ADMIN_USER"
else
  echo "etcd at $ETCDCTL_ENDPOINTS: auth is on; working as the user ETCD_CERT's common name names"
fi
others=()
for u in $USERS; do
  case " root edge-pusher edgectl edge-observer " in *" $u "*) continue ;; esac
  [[ "$u" == edge-health-* ]] && continue
  others+=("$u")
done
echo "users already there besides edge-router's: ${others[*]:-none}"
echo "will change:"
declare -A SEEN_ROLE=()
for g in "${PLAN_GRANTS[@]}"; do
  IFS='|' read -r role perm key pfx <<<"$g"
  if [ -z "${SEEN_ROLE[$role]:-}" ]; then
    SEEN_ROLE[$role]=1
    if has_role "$role"; then echo "  role $role exists: kept, grants added"; else echo "  create role $role"; fi
  fi
  echo "    grant $role $perm $key$([ "$pfx" = 1 ] && echo " (prefix)")"
done
for u in "${PLAN_USERS[@]}"; do
  IFS='|' read -r name role var <<<"$u"
  if has_user "$name"; then
    echo "  user $name exists: kept (password unchanged), role $role granted"
  elif no_password "$name"; then
    echo "  create user $name, no password (a certificate whose common name is $name), role $role"
  elif [ -n "${!var:-}" ]; then
    echo "  create user $name, password from $var, role $role"
  else
    echo "  create user $name, password generated into $OUT_DIR/$name.password, role $role"
  fi
done
if [ "$AUTH" = off ] && [ "$ENABLE_AUTH" = 1 ]; then
  echo "  enable auth: from then on every client of this cluster needs a user or a certificate whose"
  echo "  common name is one (users besides edge-router's: ${others[*]:-none})"
elif [ "$AUTH" = off ]; then
  echo "  auth stays off (no --enable-auth): these roles are not enforced until auth is on, and"
  echo "  turning it on refuses every client without a user, other applications' too"
fi
if [ "$DRY_RUN" = 1 ]; then
  echo "dry run: nothing changed"
  exit 0
fi

GENERATED=()
# add_user NAME PASSWORD_VAR: creates the user, the password on etcdctl's stdin (or none with
# --cert-users); a generated password is kept in OUT_DIR only once the user exists with it.
add_user() {
  local name="$1" var="$2" pw generated=0
  if no_password "$name"; then
    ctl user add "$name" --no-password >/dev/null
    echo "user $name created (no password)"
    return
  fi
  pw="${!var:-}"
  if [ -z "$pw" ]; then
    pw="$(gen)"
    generated=1
  fi
  printf '%s\n' "$pw" | ctl user add "$name" --interactive=false >/dev/null
  echo "user $name created"
  if [ "$generated" = 1 ]; then
    mkdir -p "$OUT_DIR"
    chmod 0700 "$OUT_DIR"
    (umask 077 && printf '%s\n' "$pw" >"$OUT_DIR/$name.password")
    chmod 0600 "$OUT_DIR/$name.password"
    GENERATED+=("$OUT_DIR/$name.password")
  fi
  # a generated root password is the one this run authenticates with once auth is on
  if [ "$name" = root ]; then ROOT_PASSWORD="$pw"; fi
}

for g in "${PLAN_GRANTS[@]}"; do
  IFS='|' read -r role perm key pfx <<<"$g"
  if ! has_role "$role"; then
    ctl role add "$role" >/dev/null
    ROLES+="$role "
  fi
  if [ "$pfx" = 1 ]; then
    ctl role grant-permission "$role" --prefix=true "$perm" "$key" >/dev/null
  else
    ctl role grant-permission "$role" "$perm" "$key" >/dev/null
  fi
done
for u in "${PLAN_USERS[@]}"; do
  IFS='|' read -r name role var <<<"$u"
  has_user "$name" || add_user "$name" "$var"
  ctl user grant-role "$name" "$role" >/dev/null
done

if [ "$AUTH" = off ] && [ "$ENABLE_AUTH" = 1 ]; then
  ctl auth enable >/dev/null
  echo "auth enabled"
  AS_ADMIN=1
  ctl role list >/dev/null
fi

if [ "${#GENERATED[@]}" -gt 0 ]; then
  echo "generated passwords (mode 0600; move them into the units' credential files or your"
  echo "secret manager, then delete them):"
  printf '  %s\n' "${GENERATED[@]}"
fi
