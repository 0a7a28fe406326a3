import { execFile } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "..");

/** The project as a user installs it: `npm pack`, then `npm install --omit=dev` of the tarball. */
export interface InstalledPackage {
  /** The directory holding the tarball and the install. */
  readonly dir: string;
  /** The `npm install --prefix` directory (`<prefix>/node_modules/edge-router`). */
  readonly prefix: string;
  /** The tarball `npm pack` wrote. */
  readonly tarball: string;
  /** The real path of an installed bin (`edgectl`, `edge-pusher`), through node_modules/.bin. */
  bin(name: "edgectl" | "edge-pusher"): string;
  /** Removes the install and the tarball. */
  remove(): void;
}

/**
 * Packs the checkout (npm runs `prepare`, i.e. `npm run build`, first) and installs the tarball
 * with production dependencies only into a fresh directory outside the checkout, so nothing
 * resolves from the repository's node_modules. The package has no dependencies (its bundles
 * carry them), so the install asks the registry for nothing.
 */
export async function installPackage(): Promise<InstalledPackage> {
  const dir = mkdtempSync(join(tmpdir(), "edge-package-"));
  try {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", dir], {
      cwd: ROOT,
      timeout: 120_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    if (!packed) throw new Error(`npm pack printed no file: ${stdout.slice(0, 500)}`);
    const tarball = join(dir, packed.filename);
    const prefix = join(dir, "install");
    await run(
      "npm",
      ["install", "--omit=dev", "--no-audit", "--no-fund", "--prefix", prefix, tarball],
      { cwd: dir, timeout: 240_000 },
    );
    return {
      dir,
      prefix,
      tarball,
      bin: (name) => realpathSync(join(prefix, "node_modules/.bin", name)),
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
