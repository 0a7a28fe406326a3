import countries from "i18n-iso-countries";
import { COUNTRY_CODES, DEFAULT_CC } from "../../../core/index.js";

/** One entry of the page's country list. */
export interface DirectoryEntry {
  readonly cc: string;
  readonly name: string;
  /** Lower-case text the search box matches: code, official name and aliases. */
  readonly search: string;
}

/** Cloudflare's two non-ISO codes (docs/reference.md §2), which no ISO package names. */
const CLOUDFLARE_CODES: Readonly<Record<string, string>> = {
  XX: "Unknown country",
  T1: "Tor network",
};

/**
 * Every code a rule may name (core's list: ISO 3166-1 alpha-2, `XX`, `T1`) plus `_default`, with
 * English names from `i18n-iso-countries`: the 252 rows of the page's country list.
 */
export function countryDirectory(): DirectoryEntry[] {
  const rows: DirectoryEntry[] = [
    { cc: DEFAULT_CC, name: "Default route", search: "_default default route" },
  ];
  const named = [...COUNTRY_CODES].map((cc) => {
    const all = countries.getName(cc, "en", { select: "all" }) ?? [];
    const name = all[0] ?? CLOUDFLARE_CODES[cc] ?? cc;
    return { cc, name, search: [cc, ...all, name].join(" ").toLowerCase() };
  });
  named.sort((a, b) => a.name.localeCompare(b.name, "en"));
  return [...rows, ...named];
}
