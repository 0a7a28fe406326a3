import { z } from "zod";
import type { CompiledMap } from "../contract/compiled-map.js";
import { attrsProblem } from "../contract/market-attrs.js";
import { isPoolName } from "../contract/pool-name.js";
import { FenceSchema } from "./fence-schema.js";

/** Attributes become origin request headers: anything off the rules rejects the map. */
const attrs = z
  .record(z.string(), z.string())
  .refine((a) => attrsProblem(a) === null)
  .optional();

import { isHeaderSafe } from "../contract/header-safe.js";

// Pool names, origins and `source` land in response and origin-request headers (`X-Edge-*`).
const headerSafe = z.string().refine(isHeaderSafe, "holds a character a header cannot carry");
const poolName = headerSafe.min(1);
const origin = z.string().url().refine(isHeaderSafe, "holds a character a header cannot carry");

const link = z.object({ pool: poolName, origin });
const route = z
  .object({
    pool: poolName,
    origin,
    chain: z.array(link).min(1).max(16),
    source: headerSafe,
    degraded: z
      .enum(["all-pools-unhealthy", "all-pools-slow", "no-default-rule", "fence-unsatisfiable"])
      .nullable(),
    // Malformed weights make the route unweighted (its chain order), never reject the map.
    weights: z
      .array(z.object({ pool: poolName, weight: z.number().int().min(1).max(1000) }))
      .min(1)
      .max(16)
      .optional()
      .catch(undefined),
    // Only headers read it; a malformed one is dropped, never a reason to reject the map.
    shed: z
      .array(
        z.object({
          pool: poolName,
          share: z.number().int().min(1).max(100),
          by: z.literal("viewers").optional(),
        }),
      )
      .min(1)
      .max(16)
      .optional()
      .catch(undefined),
    attrs,
    // The fence name becomes the X-Edge-Fence header: only a DNS label is taken.
    fence: z.string().refine(isPoolName).optional(),
  })
  .refine((r) => r.degraded !== "fence-unsatisfiable" || r.fence !== undefined);

/** Shape check for a `routes` document read back from KV (the Worker, status, anti-entropy). */
export const CompiledMapSchema = z.object({
  v: z.literal(1),
  rev: z.number().int().nonnegative(),
  epoch: z.number().int().nonnegative(),
  compiled_at: z.string(),
  default: route,
  countries: z.record(z.string(), route),
  problems: z.array(z.string()),
  // Maps written before histories were tracked have none: history 0.
  history: z.number().int().nonnegative().default(0),
  // Only compile reads it (and checks each rule again); a malformed one is dropped, never a
  // reason to reject the routes the Worker needs. Maps from older pushers have none.
  kept: z
    .record(
      z.string(),
      z.object({
        primary: z.string(),
        fallbacks: z.array(z.string()).max(16),
        weights: z.record(z.string(), z.number()).optional(),
        attrs: z.record(z.string(), z.string()).optional(),
      }),
    )
    .optional()
    .catch(undefined),
  // Only compile reads it (and checks each share again); a malformed one is dropped.
  sheds: z
    .record(
      z.string(),
      z.object({ share: z.number().int(), at: z.string(), below_since: z.string().optional() }),
    )
    .optional()
    .catch(undefined),
  // Only compile reads it (and checks each share again); a malformed one is dropped.
  viewer_sheds: z
    .record(
      z.string(),
      z.record(
        z.string(),
        z.object({ share: z.number().int(), at: z.string(), below_since: z.string().optional() }),
      ),
    )
    .optional()
    .catch(undefined),
  // Only compile reads it (a fence whose key turned invalid keeps its last valid value).
  fences: z.record(z.string(), FenceSchema).optional().catch(undefined),
  // A damaged canary sends every viewer by the stable routes, never rejects the map (§13).
  canary: z
    .object({
      id: z.string().regex(/^c[0-9]{1,15}$/),
      share: z.number().int().min(1).max(50),
      default: route.optional(),
      countries: z.record(z.string(), route),
    })
    .optional()
    .catch(undefined),
});

/** Parses a `routes` document; `null` when it is not valid JSON or not a compiled map. */
export function parseMap(text: string): CompiledMap | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const r = CompiledMapSchema.safeParse(raw);
  return r.success ? (r.data as CompiledMap) : null;
}
