/**
 * `npm run build`: bundles the two Node entry points into `dist/` with esbuild, so the installed
 * package starts without tsx. npm packages stay external (the package's `dependencies`, resolved
 * from node_modules at run time: etcd3 loads its .proto files from disk), except commander (see
 * `BUNDLED`) and the `cloudflare` SDK: the KV sink uses its tree-shakable client with the KV
 * namespaces resource only, and bundling is what drops the rest (loaded from node_modules, the
 * SDK's index brings in every resource: about 35 MiB of the pusher's RSS). The dynamic imports (each KV sink, etcd, the HTTP
 * server, each edgectl command's modules) stay separate chunks loaded only when used.
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
import { build, type Plugin } from "esbuild";
import { thirdPartyLicenses } from "./third-party-licenses.js";

const ROOT = resolve(import.meta.dirname, "..");
const DIST = join(ROOT, "dist");

/** The Node versions `engines` allows start at 22.12. */
const TARGET = "node22.12";

/**
 * Packages bundled into `dist/` rather than resolved from node_modules at run time. commander:
 * every edgectl start loads it, and from the bundle it skips the package lookup and shares the
 * bundle's code cache (`edgectl --help` about 3 ms sooner; bench/README.md "cli").
 */
const BUNDLED = /^(cloudflare|commander)(\/|$)/;

/**
 * Builtins a bundled CommonJS package `require`s but seldom uses, loaded on first use instead:
 * commander needs `node:child_process` only for subcommands that are separate executables,
 * which edgectl has none of, and loading it (with `net` and streams) costs each start ~5 ms.
 */
const LAZY_BUILTINS = new Set(["node:child_process"]);

/** The module a bundled package's `require("node:…")` gets (an ES module bundle has no `require`). */
function builtinShim(name: string): string {
  const load = `process.getBuiltinModule(${JSON.stringify(name)})`;
  return LAZY_BUILTINS.has(name)
    ? `let m; module.exports = new Proxy({}, { get: (_, key) => (m ??= ${load})[key] });`
    : `module.exports = ${load};`;
}

/** Every other bare import (npm packages, `node:` builtins) stays an import of the package. */
const externalPackages: Plugin = {
  name: "external-packages",
  setup(b) {
    b.onResolve({ filter: /^node:/ }, (args) =>
      args.kind === "require-call" ? { path: args.path, namespace: "builtin" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      contents: builtinShim(args.path),
      loader: "js",
    }));
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      BUNDLED.test(args.path) ? undefined : { path: args.path, external: true },
    );
  },
};

const started = performance.now();
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: {
    "edge-pusher": "pusher/main.ts",
    edgectl: "edgectl/main.ts",
    // The package's own export (`import { verifyEdgeSignature } from "edge-router"`).
    origin: "core/edge-signature.ts",
  },
  outdir: DIST,
  write: false,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: TARGET,
  plugins: [externalPackages],
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
