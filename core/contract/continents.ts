import { COUNTRY_CONTINENT_PAIRS } from "./continent-table.js";

/** Cloudflare's `request.cf.continent` codes. */
export const CONTINENT_CODES = ["AF", "AN", "AS", "EU", "NA", "OC", "SA"] as const;
/** One of Cloudflare's continent codes. */
export type ContinentCode = (typeof CONTINENT_CODES)[number];

const CONTINENTS: ReadonlySet<string> = new Set(CONTINENT_CODES);

/** True for one of the seven continent codes. */
export function isContinentCode(k: string): k is ContinentCode {
  return CONTINENTS.has(k);
}

const byCountry = new Map<string, ContinentCode>();
const byContinent = new Map<ContinentCode, string[]>();
for (const pair of COUNTRY_CONTINENT_PAIRS.trim().split(" ")) {
  const cc = pair.slice(0, 2);
  const k = pair.slice(2);
  if (!isContinentCode(k)) continue;
  byCountry.set(cc, k);
  const list = byContinent.get(k) ?? [];
  list.push(cc);
  byContinent.set(k, list);
}

/**
 * The continent Cloudflare assigns a country, `undefined` for `XX` (unknown), `T1` (Tor) and
 * `_default`: those never take a continent rule.
 */
export function continentOf(cc: string): ContinentCode | undefined {
  return byCountry.get(cc);
}

/** The countries of a continent, sorted. */
export function countriesOf(k: ContinentCode): readonly string[] {
  return byContinent.get(k) ?? [];
}
