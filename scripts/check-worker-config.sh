#!/usr/bin/env bash
# `npm run check:worker` (CI): the one wrangler.toml is deployable and the Worker's types follow it.
#  1. [env.production.vars] names exactly the keys of the top-level [vars] (wrangler does not
#     inherit vars into an environment, so a var added to one table only is a silent default);
#  2. worker-configuration.d.ts is what `npm run types:worker` generates now (the Worker's Env);
#  3. `wrangler deploy --dry-run --env production` bundles the production Worker.
set -euo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false

node --input-type=module -e '
import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
const doc = parse(readFileSync("wrangler.toml", "utf8"));
const local = Object.keys(doc.vars ?? {}).sort();
const prod = Object.keys(doc.env?.production?.vars ?? {}).sort();
const onlyLocal = local.filter((k) => !prod.includes(k));
const onlyProd = prod.filter((k) => !local.includes(k));
if (onlyLocal.length || onlyProd.length) {
  console.error(`check:worker: wrangler.toml [vars] and [env.production.vars] differ: only in [vars]: ${onlyLocal.join(", ") || "-"}; only in production: ${onlyProd.join(", ") || "-"}`);
  process.exit(1);
}
console.log(`check:worker: [vars] and [env.production.vars] both name ${local.join(", ")}`);
'

if ! npx wrangler types --include-runtime=false --strict-vars=false --env-file=/dev/null --check >/dev/null 2>&1; then
  echo "check:worker: worker-configuration.d.ts is stale: run \`npm run types:worker\` and commit it" >&2
  exit 1
fi
echo "check:worker: worker-configuration.d.ts is current"

out=.tmp/worker-dry-run
rm -rf "$out"
if ! log=$(npx wrangler deploy --dry-run --env production --outdir "$out" 2>&1); then
  printf '%s\n' "$log" >&2
  echo "check:worker: wrangler deploy --dry-run --env production failed" >&2
  exit 1
fi
echo "check:worker: production Worker bundles ($(du -k "$out/index.js" | cut -f1) KiB, minified as wrangler.toml says)"
