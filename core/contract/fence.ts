import type { ContinentCode } from "./continents.js";

/**
 * A residency fence as the compiled map carries it (docs/reference.md §10): the countries it
 * covers (listed, plus every country of the listed continents), the `pool/` regions their viewers
 * may be served from, and the floor pool (inside the fence).
 */
export interface Fence {
  countries: string[];
  continents: ContinentCode[];
  regions: string[];
  floor: string;
}
