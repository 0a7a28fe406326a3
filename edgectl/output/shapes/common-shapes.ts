import { z } from "zod";

/** One pool's share of a route's viewers. */
export const ShareShape = z.object({
  pool: z.string(),
  percent: z.number().int().min(0).max(100).describe("whole percent of the route's viewers"),
});

/** A compiled route exactly as the map (KV `routes`) holds it. */
export const RouteShape = z.object({
  pool: z.string().describe("the pool viewers without a weighted split are sent to"),
  origin: z.string(),
  chain: z.array(z.object({ pool: z.string(), origin: z.string() })).describe("the failover order"),
  source: z
    .string()
    .describe("the key that decided: country/CC, continent/K, override/CC, override/K or floor"),
  degraded: z.enum(["all-pools-unhealthy", "no-default-rule", "fence-unsatisfiable"]).nullable(),
  weights: z
    .array(z.object({ pool: z.string(), weight: z.number().int() }))
    .optional()
    .describe("the healthy weighted pools and their relative weights, when the rule has weights"),
  attrs: z
    .record(z.string(), z.string())
    .optional()
    .describe(
      "market attributes sent to the origin as X-Edge-Attr-* (continent < country < override)",
    ),
  fence: z
    .string()
    .optional()
    .describe("the fence that covers the country: every pool of the route lies inside it"),
});

/** A route as the edge effect shows it: where it sends viewers, in shares. */
export const RouteSummaryShape = z.object({
  pool: z.string(),
  origin: z.string(),
  source: z.string(),
  degraded: z.enum(["all-pools-unhealthy", "no-default-rule", "fence-unsatisfiable"]).nullable(),
  shares: z.array(ShareShape).describe("viewers per pool: the split, else 100 on pool"),
});

/** One route whose pool, origin or split changes: `DE: fra-1 100% → fra-1 80% · ams-1 20%`. */
export const RouteShiftShape = z.object({
  country: z
    .string()
    .describe("CC, or _default (every country without a route of its own in the map)"),
  before: RouteSummaryShape,
  after: RouteSummaryShape,
});

/** One intent key `apply` writes or deletes. */
export const KeyChangeShape = z.object({
  kind: z.enum(["add", "change", "remove"]),
  key: z.string().describe("relative to the prefix: pool/P, country/CC, continent/K"),
  before: z.string().optional().describe("the stored value (JSON text), for change and remove"),
  after: z.string().optional().describe("the value written (canonical JSON), for add and change"),
});

/** A rule as etcd holds it (country, continent or override). */
export const RuleShape = z.object({
  primary: z.string(),
  fallbacks: z.array(z.string()),
  weights: z.record(z.string(), z.number()).optional(),
  attrs: z.record(z.string(), z.string()).optional(),
  reason: z.string().optional(),
});
