#!/usr/bin/env bash
# Prepares the etcd versions the tests run on (the etcd matrix) under .tools/etcd-v<version>/,
# each folder holding that version's etcd, etcdctl and etcdutl:
#   - one folder per Go module in test/etcd-matrix/v*/ (go.mod pins the release; built with Go
#     from the Go module proxy);
#   - Debian trixie's etcd-server and etcd-client 3.5.16 (static binaries), fetched with
#     apt-get download against a private sources list under .tools/apt/ (the machine's apt
#     configuration is left alone) and unpacked with dpkg -x;
#   - the etcd on PATH (Debian bookworm's 3.4.23) is linked as .tools/etcd-v<its version>/.
# Idempotent: a folder whose stamp matches its inputs is kept as it is (the whole run then takes
# well under a second). Whatever cannot be prepared is said in one line, and the rest goes on;
# the exit status is 0 unless the arguments are wrong.
# ETCD_MATRIX_NICE (default 10) is the niceness of the Go builds.
set -uo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[etcd-matrix]\033[0m %s\n' "$*" >&2; }
case "${1:-}" in
  "") ;;
  *) echo "usage: scripts/etcd-matrix.sh" >&2; exit 2 ;;
esac

TOOLS=$PWD/.tools
mkdir -p "$TOOLS"
# One preparation at a time (.ci/run starts one in the background; npm test's own then waits for it).
exec 9>"$TOOLS/.lock"
flock 9

# --- the etcd on PATH ---------------------------------------------------------------------------
if command -v etcd >/dev/null 2>&1; then
  sys=$(command -v etcd)
  sysver=$(etcd --version 2>/dev/null | sed -n 's/^etcd Version: \([0-9.]*\).*/\1/p')
  if [ -n "$sysver" ] && [ "$(readlink -f "$sys")" != "$(readlink -f "$TOOLS/etcd-v$sysver/etcd" 2>/dev/null)" ]; then
    if [ ! -e "$TOOLS/etcd-v$sysver/etcd" ] || [ -L "$TOOLS/etcd-v$sysver/etcd" ]; then
      mkdir -p "$TOOLS/etcd-v$sysver"
      for t in etcd etcdctl etcdutl; do
        d=$(dirname "$sys")/$t
        if [ -x "$d" ]; then ln -sfn "$d" "$TOOLS/etcd-v$sysver/$t"; fi
      done
    fi
  fi
fi

# --- Go builds ----------------------------------------------------------------------------------
GO=$(command -v go || true)
[ -z "$GO" ] && [ -x /usr/local/go/bin/go ] && GO=/usr/local/go/bin/go
stamp_of() { cat "$1/go.mod" "$1/go.sum" "$1/etcd/main.go" | sha256sum | cut -c1-16; }
todo=()
for mod in test/etcd-matrix/v*/; do
  mod=${mod%/}
  out=$TOOLS/etcd-$(basename "$mod")
  if [ "$(cat "$out/.stamp" 2>/dev/null)" != "$(stamp_of "$mod")" ] || [ ! -x "$out/etcd" ] ||
    [ ! -x "$out/etcdctl" ] || [ ! -x "$out/etcdutl" ]; then
    todo+=("$mod")
  fi
done
if [ ${#todo[@]} -gt 0 ] && [ -z "$GO" ]; then
  say "no Go toolchain: etcd ${todo[*]##*/} not built; the tests run on the versions in .tools/."
  todo=()
fi
for i in "${!todo[@]}"; do
  mod=${todo[$i]}
  v=$(basename "$mod")
  out=$TOOLS/etcd-$v
  say "building etcd, etcdctl and etcdutl $v with $("$GO" env GOVERSION)…"
  rm -rf "$out.part" && mkdir -p "$out.part"
  start=$(date +%s)
  # GOTOOLCHAIN=local: the pinned modules need Go 1.26.0; a newer go line fails here rather than
  # silently fetching a toolchain.
  if (cd "$mod" && export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-buildvcs=false CGO_ENABLED=0 &&
    nice -n "${ETCD_MATRIX_NICE:-10}" "$GO" build -trimpath -o "$out.part/etcd" ./etcd &&
    nice -n "${ETCD_MATRIX_NICE:-10}" "$GO" build -trimpath -o "$out.part/etcdctl" go.etcd.io/etcd/etcdctl/v3 &&
    nice -n "${ETCD_MATRIX_NICE:-10}" "$GO" build -trimpath -o "$out.part/etcdutl" go.etcd.io/etcd/etcdutl/v3) \
    >"$out.part/build.log" 2>&1; then
    stamp_of "$mod" >"$out.part/.stamp"
    rm -rf "$out" && mv "$out.part" "$out"
    say "built etcd $v in $(($(date +%s) - start)) s"
  else
    # Most often the Go module proxy is out of reach: the others would fail alike.
    rest=("${todo[@]:$i}")
    say "etcd ${rest[*]##*/} not built ($(grep -v '^go: downloading' "$out.part/build.log" | head -1)); the tests run on the versions in .tools/."
    rm -rf "$out.part"
    break
  fi
done

# --- Debian trixie's etcd (3.5.16) -------------------------------------------------------------
if ! compgen -G "$TOOLS/etcd-v*/.debian-trixie" >/dev/null; then
  if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
    say "no apt-get/dpkg: Debian trixie's etcd is not fetched."
  else
    APT=$TOOLS/apt
    rm -rf "$APT" && mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial" "$APT/debs" "$APT/root"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$APT/sources.list"
    opts=(-o "Dir::Etc::sourcelist=$APT/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$APT/lists"
      -o "Dir::Cache=$APT/cache" -o "Dir::State::status=/dev/null" -o APT::Sandbox::User=root -qq)
    if apt-get "${opts[@]}" update >"$APT/log" 2>&1 &&
      (cd "$APT/debs" && apt-get "${opts[@]}" download etcd-server etcd-client) >>"$APT/log" 2>&1; then
      for deb in "$APT"/debs/*.deb; do dpkg -x "$deb" "$APT/root"; done
      ver=$("$APT/root/usr/bin/etcd" --version 2>/dev/null | sed -n 's/^etcd Version: \([0-9.]*\).*/\1/p')
      if [ -n "$ver" ]; then
        out=$TOOLS/etcd-v$ver
        rm -rf "$out" && mkdir -p "$out"
        for t in etcd etcdctl etcdutl; do
          if [ -x "$APT/root/usr/bin/$t" ]; then mv "$APT/root/usr/bin/$t" "$out/$t"; fi
        done
        touch "$out/.debian-trixie"
        say "fetched Debian trixie's etcd $ver"
      else
        say "Debian trixie's etcd did not run here: $("$APT/root/usr/bin/etcd" --version 2>&1 | head -1)"
      fi
      rm -rf "$APT/root" "$APT/debs"
    else
      say "Debian trixie's etcd is not fetched (no Debian mirror?): $(grep -E '^(E|W):' "$APT/log" | head -1)"
    fi
  fi
fi
exit 0
