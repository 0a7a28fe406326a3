import pkg from "../package.json" with { type: "json" };

/** The package's version (`package.json`), bundled into `dist/` at build time. */
export const VERSION: string = pkg.version;
