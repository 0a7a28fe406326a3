import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { NODE_TARGET, nodeBundlePlugin } from "../../scripts/node-bundle.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const built = new Map<string, Promise<string>>();

/** A floor's program: an entry file (from the checkout's root), or its source text. */
export type FloorProgram = { readonly entry: string } | { readonly source: string };

/**
 * A floor's program bundled as dist/ is (scripts/node-bundle.ts: npm packages bundled in, etcd3's
 * definitions compiled in), so the floor starts as the bins do; once per bench process and name.
 * Returns the bundle's path.
 */
export function floorBundle(name: string, program: FloorProgram): Promise<string> {
  let path = built.get(name);
  if (!path) {
    path = (async () => {
      const outdir = join(ROOT, ".tmp/bench-floors");
      mkdirSync(outdir, { recursive: true });
      const outfile = join(outdir, `${name}.mjs`);
      await build({
        absWorkingDir: ROOT,
        ...("entry" in program
          ? { entryPoints: [program.entry] }
          : { stdin: { contents: program.source, resolveDir: ROOT, loader: "ts" } }),
        outfile,
        bundle: true,
        format: "esm",
        platform: "node",
        target: NODE_TARGET,
        plugins: [nodeBundlePlugin(ROOT)],
        logLevel: "warning",
      });
      return outfile;
    })();
    built.set(name, path);
  }
  return path;
}
