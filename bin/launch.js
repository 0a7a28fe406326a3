// Shared by the two bins: plain JavaScript, so an installed package needs no TypeScript loader.
import { existsSync } from "node:fs";
import { enableCompileCache } from "node:module";

/**
 * Imports `dist/<name>.js`, with source maps on so stack traces name the TypeScript lines.
 * A checkout that was never built gets one line saying how to build, not a module-not-found trace.
 * @param {string} name the bundle's name, as in package.json `bin`
 */
export async function launch(name) {
  const bundle = new URL(`../dist/${name}.js`, import.meta.url);
  if (!existsSync(bundle)) {
    process.stderr.write(
      `${name}: ${bundle.pathname} is missing; run \`npm run build\` in the edge-router checkout\n`,
    );
    process.exit(1);
  }
  // V8's code cache (in the OS temp directory) cuts the start of the next run by about a fifth;
  // when the directory is not writable Node carries on without it.
  enableCompileCache();
  // Source maps cost each start a scan of every loaded module that has one (about 20 ms of
  // `edgectl status`); edgectl prints a stack only with --debug, so only then does it pay.
  if (name !== "edgectl" || process.argv.includes("--debug")) process.setSourceMapsEnabled(true);
  await import(bundle.href);
}
