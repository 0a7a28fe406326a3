import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

/** Set on the main Vitest process once `dist/` is built: each project runs this setup. */
const BUILT = Symbol.for("edge-router.test.dist-built");

/**
 * Vitest global setup: rebuilds `dist/` before any test file runs, because the tests start the
 * real bins (`bin/edge-pusher.js`, `bin/edgectl.js`), which run the bundles. A stale bundle would
 * test yesterday's code; unchanged sources rebuild to identical files in well under a second.
 * Every project of the run calls it; the first builds.
 */
export default function buildDist(): void {
  const flags = globalThis as { [BUILT]?: boolean };
  if (flags[BUILT]) return;
  const root = resolve(import.meta.dirname, "../..");
  execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  flags[BUILT] = true;
}
