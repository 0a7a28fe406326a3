/**
 * Where `countries-list` differs from the GeoNames assignment that MaxMind (and so Cloudflare's
 * `request.cf.continent`) uses. countries-list 3.x files Russia under Asia; GeoNames and MaxMind
 * GeoLite2 give `RU` the continent `EU`.
 */
export const CONTINENT_CORRECTIONS: Readonly<Record<string, string>> = { RU: "EU" };
