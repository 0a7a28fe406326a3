/**
 * `npm run build`: bundles the two Node entry points into `dist/` with esbuild, so the installed
 * package starts without tsx, with the npm packages they use bundled in (scripts/node-bundle.ts).
 * The Cloudflare SDK's tree-shakable client brings only the KV namespaces resource (its index
 * would bring every resource: about 35 MiB of the pusher's RSS). The dynamic imports (each edgectl
 * command's action, edgectl/actions/) stay separate chunks loaded only when used.
 * `dist/THIRD_PARTY_LICENSES` carries the license file of every package bundled in (from
 * esbuild's metafile), since their code ships inside `dist/`.
 *
 *   tsx scripts/build.ts
 *
 * Each file is written beside its final name and renamed into place, so a process starting from
 * `dist/` while a build runs reads whole files. Chunk names carry a content hash: rebuilding
 * unchanged sources rewrites identical files, and chunks no bundle refers to any more are removed.
 */
import { cpSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { build } from "esbuild";
import { NODE_TARGET, nodeBundlePlugin } from "./node-bundle.js";
import { thirdPartyLicenses } from "./third-party-licenses.js";

const ROOT = resolve(import.meta.dirname, "..");
const DIST = join(ROOT, "dist");

const started = performance.now();
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: {
    "edge-pusher": "pusher/main.ts",
    edgectl: "edgectl/main.ts",
    // The package's own export (`import { verifyEdgeSignature } from "edge-router"`).
    origin: "core/contract/edge-signature.ts",
  },
  outdir: DIST,
  write: false,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: NODE_TARGET,
  plugins: [nodeBundlePlugin(ROOT)],
  chunkNames: "chunks/[name]-[hash]",
  sourcemap: "linked",
  sourcesContent: false,
  // The bundled packages' license files go to dist/THIRD_PARTY_LICENSES instead.
  legalComments: "none",
  metafile: true,
  logLevel: "warning",
});

const written = new Set<string>([join(DIST, "THIRD_PARTY_LICENSES")]);
// Chunks first, entry points last: an entry never refers to a chunk that is not there yet.
const files = [...result.outputFiles].sort(
  (a, b) => Number(!a.path.includes("/chunks/")) - Number(!b.path.includes("/chunks/")),
);
for (const file of files) {
  mkdirSync(dirname(file.path), { recursive: true });
  const scratch = `${file.path}.${process.pid}.tmp`;
  writeFileSync(scratch, file.contents);
  renameSync(scratch, file.path);
  written.add(file.path);
}
for (const dir of [DIST, join(DIST, "chunks")]) {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    if (name.isFile() && !written.has(path)) rmSync(path, { force: true });
  }
}
writeFileSync(join(DIST, "THIRD_PARTY_LICENSES"), thirdPartyLicenses(ROOT, result.metafile));
// The /ui page's static files, read at run time beside the bundle (pusher/ui/ui-assets.ts).
for (const dir of ["page", "assets"]) {
  rmSync(join(DIST, "ui", dir), { recursive: true, force: true });
  cpSync(join(ROOT, "pusher/ui", dir), join(DIST, "ui", dir), {
    recursive: true,
    filter: (src) => !/\.(ts|json)$/.test(src) || src.endsWith("countries.json"),
  });
}
const ms = Math.round(performance.now() - started);
process.stderr.write(`build: ${written.size} files in ${relative(ROOT, DIST)}/ (${ms} ms)\n`);
