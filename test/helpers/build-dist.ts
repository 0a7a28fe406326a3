import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

/**
 * Vitest global setup: rebuilds `dist/` before any test file runs, because the tests start the
 * real bins (`bin/edge-pusher.js`, `bin/edgectl.js`), which run the bundles. A stale bundle would
 * test yesterday's code; unchanged sources rebuild to identical files in well under a second.
 */
export default function buildDist(): void {
  const root = resolve(import.meta.dirname, "../..");
  execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
