#!/bin/sh
# ExecStart helper for the edge-router units: exports every systemd credential whose name is an
# environment variable name (LoadCredential=ETCD_PASSWORD:…, LoadCredential=CF_API_TOKEN:…) as
# that variable, then execs the command. The secret files stay root-only on disk; systemd hands
# this service's (dynamic) user a private copy in $CREDENTIALS_DIRECTORY; the values never appear
# on a command line. Other credentials (e.g. a TLS key, named etcd-client-key.pem) are left as
# files, for settings such as ETCD_KEY_FILE=%d/etcd-client-key.pem.
set -eu
if [ -n "${CREDENTIALS_DIRECTORY:-}" ] && [ -d "$CREDENTIALS_DIRECTORY" ]; then
  for file in "$CREDENTIALS_DIRECTORY"/*; do
    [ -f "$file" ] || continue
    name=${file##*/}
    case "$name" in
      '' | [0-9]* | *[!A-Z0-9_]*) continue ;;
    esac
    # $(…) drops the trailing newline an editor leaves in the file.
    value=$(cat "$file")
    export "$name=$value"
  done
fi
exec "$@"
