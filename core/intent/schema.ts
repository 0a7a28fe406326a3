import { z } from "zod";
import { attrsProblem } from "../contract/market-attrs.js";
import { checkOrigin } from "../contract/origin-check.js";
import { isPoolName } from "../contract/pool-name.js";
import { VALUE_FREE } from "./value-free-issue.js";

/** Most fallbacks a rule may list. */
export const MAX_FALLBACKS = 8;
/** Largest value accepted under the prefix, in bytes. */
export const MAX_VALUE_BYTES = 64 * 1024;

const poolRef = z.string().refine(isPoolName, { message: "not a valid pool name (a DNS label)" });

// Every message below names the field or a limit, never the input (docs/reference.md §3.6): zod runs a
// superRefine even when a pool name failed its own check, so the input may be any junk.

/** Largest weight a pool may carry in a rule. */
export const MAX_WEIGHT = 1000;

/** The message a rule's weights get when they name a pool the rule does not. */
const WEIGHTS_UNKNOWN_POOL = "names a pool that is not the primary or a fallback";

/** True when `v` is an object with an own `__proto__` key (JSON.parse and YAML make one). */
const hasProtoKey = (v: unknown): boolean =>
  typeof v === "object" && v !== null && Object.hasOwn(v, "__proto__");

/**
 * `z.record(z.string(), z.unknown())` that refuses a `__proto__` key with `problem(raw)`: parsed
 * JSON and YAML keep one as an own key, but zod drops it in silence (assigning it to the result
 * would set its prototype), so without this check it would never be seen, let alone refused.
 */
function recordRefusingProto(problem: (raw: Readonly<Record<string, unknown>>) => string) {
  return z
    .unknown()
    .superRefine((raw, ctx) => {
      if (hasProtoKey(raw))
        ctx.addIssue({ code: "custom", message: problem(raw as Record<string, unknown>) });
    })
    .pipe(z.record(z.string(), z.unknown()));
}

/**
 * `weights`: relative integers 0–1000 over the rule's own pools (pools left out weigh 0). Keys
 * are checked against the rule, not here, and no message names a key: it may be any junk
 * (`__proto__`, never a pool name, is refused here as a pool the rule does not name).
 */
const WeightsSchema = recordRefusingProto(() => WEIGHTS_UNKNOWN_POOL)
  .superRefine((weights, ctx) => {
    for (const w of Object.values(weights)) {
      if (typeof w !== "number" || !Number.isInteger(w) || w < 0 || w > MAX_WEIGHT) {
        ctx.addIssue({ code: "custom", message: `each weight must be an integer 0–${MAX_WEIGHT}` });
        return;
      }
    }
  })
  .transform((w) => w as Record<string, number>);

/** Reports weights that name a pool the rule does not (docs/reference.md §2). */
function checkWeights(
  rule: {
    primary: string;
    fallbacks: readonly string[];
    weights?: Record<string, number> | undefined;
  },
  ctx: z.RefinementCtx,
): void {
  // A `__proto__` key failed the field itself (zod still runs this check): said once is enough.
  if (!rule.weights || hasProtoKey(rule.weights)) return;
  const pools = new Set([rule.primary, ...rule.fallbacks]);
  if (Object.keys(rule.weights).some((p) => !pools.has(p))) {
    ctx.addIssue({ code: "custom", path: ["weights"], message: WEIGHTS_UNKNOWN_POOL });
  }
}

/**
 * `attrs`: market attributes (docs/reference.md §11); no message echoes a name or value. A
 * `__proto__` name is refused as every name outside `ATTR_NAME` is (`attrsProblem` sees it).
 */
const AttrsSchema = recordRefusingProto((raw) => attrsProblem(raw) ?? "invalid attribute name")
  .superRefine((attrs, ctx) => {
    const problem = attrsProblem(attrs);
    if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform((a) => a as Record<string, string>);

/** The fields a country rule and an override share: primary, ordered fallbacks, weights, attrs. */
const ruleFields = {
  primary: poolRef,
  fallbacks: z.array(poolRef).max(MAX_FALLBACKS, `at most ${MAX_FALLBACKS} fallbacks`).default([]),
  weights: WeightsSchema.optional(),
  attrs: AttrsSchema.optional(),
};

/** `country/{CC}`: the primary pool, its ordered fallbacks and optional weights. */
export const CountryRuleSchema = z
  .object(ruleFields)
  .strict()
  .superRefine((rule, ctx) => {
    checkWeights(rule, ctx);
    const seen = new Set<string>();
    rule.fallbacks.forEach((pool, i) => {
      if (pool === rule.primary) {
        ctx.addIssue({
          code: "custom",
          path: ["fallbacks", i],
          message: "repeats the primary",
        });
      } else if (seen.has(pool)) {
        ctx.addIssue({
          code: "custom",
          path: ["fallbacks", i],
          message: "duplicate pool",
        });
      }
      seen.add(pool);
    });
  });
export type CountryRule = z.output<typeof CountryRuleSchema>;

/**
 * `override/{CC}`: a country rule plus the reason for the boost and when it ends. `expires_at` is
 * an ISO 8601 instant; compile ignores the override once it has passed (etcd resets lease TTLs on
 * a leader change, so the lease alone may outlive the boost).
 */
export const OverrideRuleSchema = z
  .object({
    ...ruleFields,
    reason: z.string().max(500).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    const r = CountryRuleSchema.safeParse(
      {
        primary: rule.primary,
        fallbacks: rule.fallbacks,
        // weights holding `__proto__` failed their own field already
        ...(rule.weights && !hasProtoKey(rule.weights) ? { weights: rule.weights } : {}),
      },
      VALUE_FREE,
    );
    if (!r.success) for (const issue of r.error.issues) ctx.addIssue({ ...issue, code: "custom" });
  });
export type OverrideRule = z.output<typeof OverrideRuleSchema>;

/**
 * An absolute http(s) URL with no path, query, fragment or credentials, whose host is a DNS name
 * or loopback; a trailing `/`, any case and a default port are fine. The output is the normalized
 * origin (`https://fra-1.example.net`). An IP-literal host's issue carries `params.problemCode`
 * (`ip-literal-origin`, {@link issueProblemCode}), so its problem names that reason.
 */
export const OriginSchema = z.string().transform((s, ctx) => {
  const c = checkOrigin(s);
  if (c.ok) return c.origin;
  if (c.code === "ip-literal-origin") {
    ctx.addIssue({ code: "custom", message: c.problem, params: { problemCode: c.code } });
  } else ctx.addIssue({ code: "custom", message: c.problem });
  return z.NEVER;
});

/** Most checkers a quorum may ask for. */
export const MAX_QUORUM = 64;
/** Highest watermark `slow_ms` accepts (ten minutes). */
export const MAX_SLOW_MS = 600_000;

const slowMs = z.number().int("must be an integer").min(1, "must be at least 1").max(MAX_SLOW_MS);

/**
 * `slow_ms`: the p90 watermarks of shedding (docs/reference.md §9), integers with
 * `0 < low < high`.
 */
export const SlowMsSchema = z
  .object({ low: slowMs, high: slowMs })
  .strict()
  .superRefine((w, ctx) => {
    if (w.low >= w.high)
      ctx.addIssue({ code: "custom", path: ["low"], message: "must be below high" });
  });
export type SlowMs = z.output<typeof SlowMsSchema>;

/**
 * `pool/{pool}`: where the pool is reached; optionally how many live checkers must say healthy
 * (`quorum`), the p90 watermarks between which it sheds viewers (`slow_ms`), and whether each
 * country's own viewers' p90 sheds that country's viewers by them too (`viewers`, §12).
 */
export const PoolDefSchema = z
  .object({
    origin: OriginSchema,
    region: z.string().min(1).max(64).optional(),
    quorum: z
      .number()
      .int("must be an integer")
      .min(1, "must be at least 1")
      .max(MAX_QUORUM, `at most ${MAX_QUORUM}`)
      .optional(),
    slow_ms: SlowMsSchema.optional(),
    viewers: z.boolean().optional(),
  })
  .strict();
export type PoolDef = z.output<typeof PoolDefSchema>;

/** Health states; only `healthy` takes traffic. */
export const HealthStatusSchema = z.enum(["healthy", "draining", "unhealthy"]);
export type HealthStatus = z.output<typeof HealthStatusSchema>;

/**
 * `health/{pool}` and `health/{pool}/{checker}`: written by one of the pool's checkers under its
 * lease; `samples` is how many probes stand behind `p90_ms`.
 */
export const HealthSchema = z
  .object({
    status: HealthStatusSchema,
    p90_ms: z.number().nonnegative().finite().optional(),
    samples: z.number().int().nonnegative().optional(),
  })
  .strict();
export type Health = z.output<typeof HealthSchema>;

/** `epoch`: a plain-text decimal integer. */
export const EpochSchema = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,14})$/, "must be a decimal integer")
  .transform(Number);

/** Joins a base key with a zod path, rendering indices as `[i]`. */
export function joinPath(base: string, path: readonly PropertyKey[]): string {
  let out = base;
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}
