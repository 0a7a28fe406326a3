import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./pusher-process.js";

/** A throw-away copy of the project whose `edgectl apply` skips the epoch compare. */
export interface CasMutant {
  readonly root: string;
  remove(): void;
}

/** The epoch compare in `src/cli/apply-transaction.ts`, as the mutant's patch expects it. */
const EPOCH_COMPARE =
  /epoch\.modRevision === null\s*\?\s*client\.if\(keys\.epoch, "Create", "==", 0\)\s*:\s*client\.if\(keys\.epoch, "Mod", "==", epoch\.modRevision\);/;

/**
 * Copies `src/` and `bin/` to a temp dir (node_modules linked) and replaces the epoch compare
 * with one that always holds. Production code is never touched; throws if the compare cannot be
 * found (the mutant would otherwise silently equal the original).
 */
export function buildCasMutant(): CasMutant {
  const root = mkdtempSync(join(tmpdir(), "faults-cas-mutant-"));
  cpSync(join(ROOT, "src"), join(root, "src"), { recursive: true });
  cpSync(join(ROOT, "bin"), join(root, "bin"), { recursive: true });
  cpSync(join(ROOT, "package.json"), join(root, "package.json"));
  for (const f of ["tsconfig.json", "tsconfig.base.json", "wrangler.toml"]) {
    try {
      cpSync(join(ROOT, f), join(root, f));
    } catch {
      // optional
    }
  }
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  const file = join(root, "src/cli/apply-transaction.ts");
  const text = readFileSync(file, "utf8");
  if (!EPOCH_COMPARE.test(text)) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(
      "cannot build the CAS mutant: the epoch compare in apply-transaction.ts changed shape",
    );
  }
  writeFileSync(
    file,
    text.replace(
      EPOCH_COMPARE,
      'client.if(keys.epoch, "Version", "<", 1_000_000_000); // MUTANT: epoch compare disabled',
    ),
  );
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
