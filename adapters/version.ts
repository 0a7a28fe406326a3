import { version } from "../package.json";

/** The package's version (`package.json`); the build inlines it, not the rest of the file. */
export const VERSION: string = version;
