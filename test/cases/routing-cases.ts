import type { DegradedReason } from "../../core/index.js";
import type { MapSpec } from "../../testkit/map-builder.js";

// The builder is shared with the bench; the cases import it from there.
export { buildMap, type MapSpec, type RouteSpec } from "../../testkit/map-builder.js";

/** One row: a map, what `request.cf.country` says, and where the request must go. */
export interface RoutingCase {
  readonly name: string;
  readonly map: MapSpec;
  /** Raw `request.cf.country`; `null` when Cloudflare gives none. */
  readonly cfCountry: string | null;
  readonly expect: {
    readonly country: string;
    readonly pool: string;
    readonly source: string;
    readonly degraded: DegradedReason | null;
  };
}

/** Every pool a case names; the Worker tests start one origin per pool. */
export const CASE_POOLS = ["fra-1", "ams-1", "par-1", "lon-1"] as const;

const NORMAL: MapSpec = {
  default: { chain: ["ams-1", "par-1"], source: "country/_default" },
  countries: {
    DE: { chain: ["fra-1", "ams-1"], source: "country/DE" },
    GB: { chain: ["lon-1"], source: "override/GB" },
    T1: { chain: ["par-1"], source: "country/T1" },
    XX: { chain: ["lon-1", "par-1"], source: "country/XX" },
    IT: { chain: ["par-1"], source: "floor", degraded: "all-pools-unhealthy" },
  },
};

const NO_DEFAULT: MapSpec = {
  default: { chain: ["par-1"], source: "floor", degraded: "no-default-rule" },
  countries: { DE: { chain: ["fra-1"], source: "country/DE" } },
};

/** The shared table: core `resolveRoute` and the Worker must agree on every row. */
export const ROUTING_CASES: readonly RoutingCase[] = [
  {
    name: "a country with its own rule",
    map: NORMAL,
    cfCountry: "DE",
    expect: { country: "DE", pool: "fra-1", source: "country/DE", degraded: null },
  },
  {
    name: "a country without a rule takes the default",
    map: NORMAL,
    cfCountry: "FR",
    expect: { country: "FR", pool: "ams-1", source: "country/_default", degraded: null },
  },
  {
    name: "an override decides",
    map: NORMAL,
    cfCountry: "GB",
    expect: { country: "GB", pool: "lon-1", source: "override/GB", degraded: null },
  },
  {
    name: "lower-case cf.country is normalised",
    map: NORMAL,
    cfCountry: "de",
    expect: { country: "DE", pool: "fra-1", source: "country/DE", degraded: null },
  },
  {
    name: "Tor (T1) has its own rule",
    map: NORMAL,
    cfCountry: "T1",
    expect: { country: "T1", pool: "par-1", source: "country/T1", degraded: null },
  },
  {
    name: "no cf.country means XX",
    map: NORMAL,
    cfCountry: null,
    expect: { country: "XX", pool: "lon-1", source: "country/XX", degraded: null },
  },
  {
    name: "a three-letter code means XX",
    map: NORMAL,
    cfCountry: "DEU",
    expect: { country: "XX", pool: "lon-1", source: "country/XX", degraded: null },
  },
  {
    name: "a prototype key is not a country",
    map: NORMAL,
    cfCountry: "__proto__",
    expect: { country: "XX", pool: "lon-1", source: "country/XX", degraded: null },
  },
  {
    name: "all pools of a country unhealthy: the floor",
    map: NORMAL,
    cfCountry: "IT",
    expect: { country: "IT", pool: "par-1", source: "floor", degraded: "all-pools-unhealthy" },
  },
  {
    name: "no default rule: unknown countries go to the floor",
    map: NO_DEFAULT,
    cfCountry: "US",
    expect: { country: "US", pool: "par-1", source: "floor", degraded: "no-default-rule" },
  },
  {
    name: "no default rule: a country with a rule still routes",
    map: NO_DEFAULT,
    cfCountry: "DE",
    expect: { country: "DE", pool: "fra-1", source: "country/DE", degraded: null },
  },
  {
    name: "no rule for XX and no cf.country: the default",
    map: NO_DEFAULT,
    cfCountry: null,
    expect: { country: "XX", pool: "par-1", source: "floor", degraded: "no-default-rule" },
  },
];
