import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import type { Cleanup } from "../lib/cleanup.js";
import { round } from "../lib/stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** Merged into `worker` in results.json: the size of what `npm run deploy` uploads. */
export interface WorkerBundleResult {
  /** Uncompressed KiB of the uploaded modules (goal ≤ 64). */
  readonly bundle_kib: number;
  /** gzip KiB of the same, computed as wrangler does (goal ≤ 35). */
  readonly bundle_gzip_kib: number;
  readonly bundle_modules: number;
  /** The largest inputs of the bundle, KiB each: where the size comes from. */
  readonly bundle_largest_inputs: Readonly<Record<string, number>>;
  /** KiB of the bundle that comes from zod (0: full validation stays in the pusher). */
  readonly bundle_zod_kib: number;
}

/** What to clean up and where to log. */
export interface WorkerBundleOptions {
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

interface Metafile {
  readonly outputs: Record<string, { readonly inputs: Record<string, { bytesInOutput: number }> }>;
}

const kib = (bytes: number) => round(bytes / 1024, 1);

/**
 * `wrangler deploy --dry-run --env production --outdir` (what `npm run deploy` would upload,
 * minified as wrangler.toml has it), then the size of every module in the out dir (source maps
 * and wrangler's README excluded) and its gzip size, as wrangler's "Total Upload" line computes
 * them. The metafile says which inputs the bytes come from.
 */
export async function workerBundle(o: WorkerBundleOptions): Promise<WorkerBundleResult> {
  const outdir = mkdtempSync(join(tmpdir(), "edge-bench-bundle-"));
  o.cleanup.add("bundle out dir", () => rmSync(outdir, { recursive: true, force: true }));
  const meta = join(outdir, "meta.json");
  const { stdout } = await run(
    "npx",
    [
      "wrangler",
      "deploy",
      "--dry-run",
      "--env",
      "production",
      "--outdir",
      outdir,
      "--metafile",
      meta,
    ],
    { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false" }, maxBuffer: 1 << 24 },
  );
  const reported = /Total Upload: ([^\n]+)/.exec(stdout)?.[1]?.trim();
  const modules = readdirSync(outdir).filter((f) => /\.(m?js|wasm)$/.test(f));
  if (modules.length === 0) throw new Error(`wrangler wrote no module to ${outdir}`);
  const contents = modules.map((f) => readFileSync(join(outdir, f)));
  const all = Buffer.concat(contents);

  const inputs: Record<string, number> = {};
  const outputs = (JSON.parse(readFileSync(meta, "utf8")) as Metafile).outputs;
  for (const out of Object.values(outputs))
    for (const [file, v] of Object.entries(out.inputs))
      inputs[file] = (inputs[file] ?? 0) + v.bytesInOutput;
  const zod = Object.entries(inputs)
    .filter(([f]) => f.includes("node_modules/zod/"))
    .reduce((s, [, b]) => s + b, 0);
  const largest = Object.entries(inputs)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([f, b]) => [f.replace(/^.*node_modules\//, ""), kib(b)] as const);

  const result = {
    bundle_kib: kib(all.length),
    bundle_gzip_kib: kib(gzipSync(all).length),
    bundle_modules: modules.length,
    bundle_largest_inputs: Object.fromEntries(largest),
    bundle_zod_kib: kib(zod),
  };
  o.log(
    `  bundle ${result.bundle_kib} KiB, gzip ${result.bundle_gzip_kib} KiB (goals ≤ 64 / ≤ 35; wrangler: ${reported ?? "no size line"}), zod ${result.bundle_zod_kib} KiB`,
  );
  return result;
}
