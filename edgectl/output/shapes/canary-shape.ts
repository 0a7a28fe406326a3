import { z } from "zod";

const Gates = z.object({
  errors_pt: z
    .number()
    .describe("the canary's error ratio may exceed stable's by this many points"),
  p90_factor: z.number().describe("its p90 may be stable's × this …"),
  p90_plus_ms: z.number().describe("… + this many ms"),
  min_samples: z.number().int().describe("requests each side needs before a gate is judged"),
});

const Side = z.object({
  samples: z.number().int().describe("requests in the compared countries and minutes"),
  error_ratio: z.number(),
  p90_ms: z.number().nullable().describe("null: none got a first byte"),
});

const Judge = z
  .object({
    state: z
      .enum(["judging", "frozen"])
      .describe("frozen: no fresh judgement; the canary keeps its share and is never promoted"),
    judgement: z
      .object({
        id: z.string(),
        verdict: z.enum(["waiting", "passing", "failing"]),
        judged_at: z.string(),
        passing_since: z.string().nullable(),
        canary: Side,
        stable: Side,
        countries: z.array(z.string()).describe("countries where both sides had viewers"),
        minutes: z.number().int(),
        detail: z.string().describe("the gates with their figures, in one line"),
        judge: z.string().describe("the observer judging: host:pid and its edge"),
      })
      .nullable()
      .describe("the latest judgement in canary/judgement, fresh or not"),
    frozen: z.string().nullable().describe("why the canary is frozen; null while judged"),
  })
  .nullable()
  .describe("the observer's judgement (edgectl observe); null without a canary");

/** `edgectl canary status -o json`: the running canary, or none. */
export const CanaryStatusShape = z
  .object({
    prefix: z.string(),
    state: z
      .enum(["none", "running", "invalid"])
      .describe("running: canary/current holds a canary; invalid: it holds something else"),
    canary: z
      .object({
        id: z.string().describe("c and the epoch that started it, as X-Edge-Canary says it"),
        share: z.number().int().describe("percent of each changed route's viewers on the canary"),
        started_at: z.string(),
        for_s: z.number().int().describe("seconds the gates must hold before promotion"),
        gates: Gates,
        changes: z
          .array(
            z.object({
              key: z.string(),
              before: z.string().nullable(),
              after: z.string().nullable(),
            }),
          )
          .describe("the proposed intent, as changes to the stable one"),
        by: z.string(),
        reason: z.string().nullable(),
      })
      .nullable(),
    judge: Judge,
  })
  .describe("canary status: the canary in canary/current");

/** `edgectl canary promote|abort -o json`: the commit that ended the canary. */
export const CanaryEndShape = z
  .object({
    id: z.string(),
    how: z.enum(["promote", "rollback", "abort"]),
    epoch: z.number().int().describe("the epoch the ending commit set"),
    commit_revision: z.number().int(),
  })
  .describe("canary promote|abort: the canary ended");
