// The build inlines only this field (esbuild tree-shakes a named JSON import), so dist/ carries
// the version it was built from; from source (tsx, vitest) it is read from package.json itself.
import { version } from "../package.json";

/** edge-router's version, package.json's `version`: what `edgectl --version` prints. */
export const VERSION: string = version;
