import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { NODE_TARGET, nodeBundlePlugin } from "../../../scripts/node-bundle.js";
import { ROOT } from "../../../testkit/pusher-process.js";

/** A bundled `edgectl` whose `apply` skips the epoch compare. */
export interface CasMutant {
  /** The script to run with node in place of `bin/edgectl.js`. */
  readonly script: string;
  remove(): void;
}

/**
 * Bundles `cas-mutant-main.ts` (edgectl, committing under rules that disable the epoch compare
 * and widen the gap between reading and locking) into a temp dir, as `npm run build` bundles
 * `edgectl/main.ts`. Production code is neither touched nor copied: the mutant replaces the
 * commit's rules through `run()`'s `commitRules` argument.
 */
export async function buildCasMutant(): Promise<CasMutant> {
  const dir = mkdtempSync(join(tmpdir(), "faults-cas-mutant-"));
  try {
    await build({
      absWorkingDir: ROOT,
      entryPoints: { edgectl: join(import.meta.dirname, "cas-mutant-main.ts") },
      outdir: dir,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: NODE_TARGET,
      plugins: [nodeBundlePlugin(ROOT)],
      logLevel: "warning",
    });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    script: join(dir, "edgectl.js"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
