import { z } from "zod";

/** One pool's share of a route's viewers. */
export const ShareShape = z
  .object({
    pool: z.string(),
    percent: z.number().int().min(0).max(100).describe("whole percent of the route's viewers"),
  })
  .meta({ id: "Share" });

/** Why a compiled route is degraded; null when it is not. */
export const DegradedShape = z
  .enum(["all-pools-unhealthy", "all-pools-slow", "no-default-rule", "fence-unsatisfiable"])
  .nullable()
  .meta({ id: "Degraded" });

/** A pool of a route that sheds viewers, and its shed share. */
export const RouteShedShape = z
  .object({
    pool: z.string(),
    share: z.number().int().min(0).max(100).describe("percent of the pool's viewers moved on"),
    by: z
      .literal("viewers")
      .optional()
      .describe("`viewers`: shed by the country's own viewers' p90 (§12); omitted for the pool's"),
  })
  .meta({ id: "RouteShed" });

/** A slow pool's watermarks (`pool/` `slow_ms`). */
export const SlowMsShape = z
  .object({ low: z.number().int(), high: z.number().int() })
  .meta({ id: "SlowMs" });

/** One pool's checkers, latency and shed (docs/reference.md §9). */
export const PoolHealthShape = z
  .object({
    pool: z.string(),
    status: z.enum(["healthy", "draining", "unhealthy", "missing"]),
    p90_ms: z.number().nullable().describe("median of its healthy checkers' p90; null when none"),
    live_checkers: z.number().int(),
    healthy_checkers: z.number().int(),
    quorum: z.number().int().nullable().describe("healthy checkers needed; null with none live"),
    slow_ms: SlowMsShape.nullable().describe("its watermarks; null when it never sheds"),
    shed: z.number().int().min(0).max(100).describe("percent of its viewers it sheds"),
  })
  .meta({ id: "PoolHealth" });

/** One country's shed of one pool by its own viewers (docs/reference.md §12). */
export const ViewerShedShape = z
  .object({
    country: z.string(),
    pool: z.string(),
    share: z.number().int().min(0).max(100).describe("percent of the country's viewers of it shed"),
    p90_ms: z
      .number()
      .nullable()
      .describe("the country's viewers' p90; null once the observation aged out"),
    samples: z.number().int().nullable().describe("the requests behind p90_ms"),
    slow_ms: SlowMsShape.nullable(),
  })
  .meta({ id: "ViewerShed" });

/** A compiled route exactly as the map (KV `routes`) holds it. */
export const RouteShape = z
  .object({
    pool: z.string().describe("the pool viewers without a weighted split are sent to"),
    origin: z.string(),
    chain: z
      .array(z.object({ pool: z.string(), origin: z.string() }))
      .describe("the failover order"),
    source: z
      .string()
      .describe("the key that decided: country/CC, continent/K, override/CC, override/K or floor"),
    degraded: DegradedShape,
    weights: z
      .array(z.object({ pool: z.string(), weight: z.number().int() }))
      .optional()
      .describe(
        "the healthy weighted pools and their relative weights, when the rule has weights or a pool sheds",
      ),
    shed: z
      .array(RouteShedShape)
      .optional()
      .describe("the route's pools that shed viewers (already in weights); omitted when none does"),
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
  })
  .meta({ id: "Route" });

/** A route as the edge effect shows it: where it sends viewers, in shares. */
export const RouteSummaryShape = z
  .object({
    pool: z.string(),
    origin: z.string(),
    source: z.string(),
    degraded: DegradedShape,
    shares: z.array(ShareShape).describe("viewers per pool: the split, else 100 on pool"),
    shed: z.array(RouteShedShape).optional().describe("pools that shed viewers; omitted when none"),
  })
  .meta({ id: "RouteSummary" });

/** One route whose pool, origin or split changes: `DE: fra-1 100% → fra-1 80% · ams-1 20%`. */
export const RouteShiftShape = z
  .object({
    country: z
      .string()
      .describe("CC, or _default (every country without a route of its own in the map)"),
    before: RouteSummaryShape,
    after: RouteSummaryShape,
  })
  .meta({ id: "RouteShift" });

/** One intent key `apply` writes or deletes. */
export const KeyChangeShape = z
  .object({
    kind: z.enum(["add", "change", "remove"]),
    key: z.string().describe("relative to the prefix: pool/P, country/CC, continent/K"),
    before: z.string().optional().describe("the stored value (JSON text), for change and remove"),
    after: z.string().optional().describe("the value written (canonical JSON), for add and change"),
  })
  .meta({ id: "KeyChange" });

/** A rule as etcd holds it (country, continent or override). */
export const RuleShape = z
  .object({
    primary: z.string(),
    fallbacks: z.array(z.string()),
    weights: z.record(z.string(), z.number()).optional(),
    attrs: z.record(z.string(), z.string()).optional(),
    reason: z.string().optional(),
  })
  .meta({ id: "Rule" });

const CanarySideShape = z
  .object({
    samples: z.number().int(),
    error_ratio: z.number(),
    p90_ms: z.number().nullable(),
  })
  .meta({ id: "CanarySide" });

/** The running canary as `status` and `explain` show it (docs/reference.md §13). */
export const CanaryReportShape = z
  .object({
    id: z.string(),
    share: z.number().int().describe("percent of each changed route's viewers on the canary"),
    started_at: z.string(),
    for_s: z.number().int(),
    age_s: z.number().int().describe("seconds since it started"),
    state: z
      .enum(["judging", "frozen"])
      .describe("frozen: no fresh judgement; it keeps its share and is never promoted"),
    frozen: z.string().nullable().describe("why it is frozen"),
    verdict: z.enum(["waiting", "passing", "failing"]).nullable(),
    judged_at: z.string().nullable(),
    passing_since: z.string().nullable(),
    canary_side: CanarySideShape.nullable(),
    stable_side: CanarySideShape.nullable(),
    detail: z.string().nullable().describe("the gates with their figures, in one line"),
  })
  .meta({ id: "CanaryReport" });
