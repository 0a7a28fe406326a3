// `npm run deploy`'s `predeploy`: refuses to ship a wrangler.toml whose [env.production] still
// holds a template's placeholder, naming the file and each field. Usage: predeploy.ts [wrangler.toml]
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "smol-toml";
import { wranglerPlaceholders } from "./predeploy/wrangler-placeholders.js";

const file = resolve(process.argv[2] ?? "wrangler.toml");
let doc: unknown;
try {
  doc = parse(readFileSync(file, "utf8"));
} catch (e) {
  process.stderr.write(`predeploy: cannot read ${file}: ${(e as Error).message.split("\n")[0]}\n`);
  process.exit(1);
}
const problems = wranglerPlaceholders(doc);
if (problems.length > 0) {
  process.stderr.write(
    `predeploy: ${file} still holds ${problems.length} placeholder${problems.length === 1 ? "" : "s"}; edit it before deploying:\n`,
  );
  for (const p of problems) process.stderr.write(`  ${p}\n`);
  process.exit(1);
}
process.stdout.write(`predeploy: ${file}: no placeholders in [env.production]\n`);
