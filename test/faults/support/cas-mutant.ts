import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../../../testkit/pusher-process.js";

/** A throw-away copy of the project whose `edgectl apply` skips the epoch compare. */
export interface CasMutant {
  readonly root: string;
  remove(): void;
}

/** The epoch compare in `edgectl/apply/apply-transaction.ts`, as the mutant's patch expects it. */
const EPOCH_COMPARE =
  /epoch\.modRevision === null\s*\?\s*client\.if\(keys\.epoch, "Create", "==", 0\)\s*:\s*client\.if\(keys\.epoch, "Mod", "==", epoch\.modRevision\);/;

/** Where `apply` (and `move`, `rollback`: edgectl/apply/commit-plan.ts) takes the lock after reading and planning, as the mutant's patch expects it. */
const LOCK_AFTER_READ =
  /const attempt = await acquireApplyLock\(client, settings\.prefix, settings\.lockTtlSeconds\);/;

function patch(root: string, rel: string, pattern: RegExp, replacement: string): void {
  const file = join(root, rel);
  const text = readFileSync(file, "utf8");
  if (!pattern.test(text)) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`cannot build the CAS mutant: ${rel} changed shape (${pattern.source})`);
  }
  writeFileSync(file, text.replace(pattern, replacement));
}

/**
 * Copies the Node parts (`core/`, `adapters/`, `edgectl/`, `pusher/`), `bin/` and `scripts/` to a
 * temp dir (node_modules linked), replaces the epoch compare with one that always holds, and
 * bundles the result into the copy's `dist/`, which its bins run. It also widens the gap between reading and locking (as an operator
 * reading the plan would), so concurrent applies reliably commit on stale reads and the checker
 * has something to catch. Production code is never touched; throws if either patch point cannot
 * be found (the mutant would otherwise silently equal the original).
 */
export function buildCasMutant(): CasMutant {
  const root = mkdtempSync(join(tmpdir(), "faults-cas-mutant-"));
  for (const dir of ["core", "adapters", "edgectl", "observer", "pusher", "bin", "scripts"]) {
    cpSync(join(ROOT, dir), join(root, dir), { recursive: true });
  }
  cpSync(join(ROOT, "package.json"), join(root, "package.json"));
  for (const f of ["tsconfig.json", "tsconfig.base.json", "wrangler.toml"]) {
    try {
      cpSync(join(ROOT, f), join(root, f));
    } catch {
      // optional
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  patch(
    root,
    "edgectl/apply/apply-transaction.ts",
    EPOCH_COMPARE,
    'client.if(keys.epoch, "Version", "<", 1_000_000_000); // MUTANT: epoch compare disabled',
  );
  patch(
    root,
    "edgectl/apply/commit-plan.ts",
    LOCK_AFTER_READ,
    "await new Promise((r) => setTimeout(r, 300 + Math.random() * 400)); // MUTANT: slow operator\n$&",
  );
  // The bins run dist/: bundle the patched sources, or the mutant would run nothing at all.
  execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
  });
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
