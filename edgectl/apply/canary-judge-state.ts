import type { PrefixRead } from "../../adapters/prefix-read.js";
import {
  CANARY_JUDGEMENT_KEY,
  type Canary,
  type CanaryJudgement,
  CanaryJudgementSchema,
  canaryFrozenReason,
  parseBoundedJson,
} from "../../core/index.js";

/**
 * Who judges the running canary (docs/reference.md §13): `judging` while a fresh judgement of
 * this canary is in `canary/judgement`; `frozen` otherwise (no observer runs, its lease ran out,
 * or its judgement is stale): the canary keeps its share and is never promoted until a judge
 * judges it again.
 */
export interface CanaryJudgeState {
  readonly state: "judging" | "frozen";
  /** The latest judgement of this canary, fresh or not; `null` when none is readable. */
  readonly judgement: CanaryJudgement | null;
  /** Why it is frozen, in one line; `null` while judged. */
  readonly frozen: string | null;
}

/** The judge's state of `canary` in `read`, at `now` (ms since the epoch). */
export function canaryJudgeState(read: PrefixRead, canary: Canary, now: number): CanaryJudgeState {
  const entry = read.entries.find((e) => e.rel === CANARY_JUDGEMENT_KEY);
  const parsed = entry ? parseBoundedJson(entry.value.toString("utf8")) : null;
  const decoded = parsed?.ok ? CanaryJudgementSchema.safeParse(parsed.value) : null;
  const judgement = decoded?.success ? decoded.data : undefined;
  const why =
    entry && !judgement
      ? "canary/judgement is not a valid judgement"
      : canaryFrozenReason(canary, judgement, now);
  return {
    state: why === null ? "judging" : "frozen",
    judgement: judgement?.id === canary.id ? judgement : null,
    frozen:
      why === null
        ? null
        : `${why}: it keeps its share and is never promoted without a judgement (is edgectl observe running?)`,
  };
}
