// Inlined by the build (esbuild bundles JSON imports), so dist/ carries the version it was built
// from; from source (tsx, vitest) it is read from package.json itself.
import pkg from "../package.json" with { type: "json" };

/** edge-router's version, package.json's `version`: what `edgectl --version` prints. */
export const VERSION: string = pkg.version;
