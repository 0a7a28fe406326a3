import type { PrefixRead } from "../../adapters/prefix-read.js";
import {
  CANARY_JUDGEMENT_KEY,
  CANARY_JUDGEMENT_STALE_MS,
  type Canary,
  type CanaryJudgement,
  CanaryJudgementSchema,
  parseBoundedJson,
} from "../../core/index.js";

/**
 * Who judges the running canary (docs/reference.md §13): `judging` while a fresh judgement of
 * this canary is in `canary/judgement`; `frozen` when there is none (no observer runs, or its
 * lease ran out), it judges another canary, or it is older than {@link CANARY_JUDGEMENT_STALE_MS}:
 * the canary keeps its share and is never promoted until a judge judges it again.
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
  const frozen = (why: string, judgement: CanaryJudgement | null = null): CanaryJudgeState => ({
    state: "frozen",
    judgement,
    frozen: `${why}: it keeps its share and is never promoted without a judgement (is edgectl observe running?)`,
  });
  if (!entry) return frozen("no judge: canary/judgement is absent");
  const parsed = parseBoundedJson(entry.value.toString("utf8"));
  const j = parsed.ok ? CanaryJudgementSchema.safeParse(parsed.value) : null;
  if (!j?.success) return frozen("canary/judgement is not a valid judgement");
  if (j.data.id !== canary.id)
    return frozen(`canary/judgement judges ${j.data.id}, not ${canary.id}`);
  const age = now - Date.parse(j.data.judged_at);
  if (age > CANARY_JUDGEMENT_STALE_MS)
    return frozen(`the last judgement is ${Math.round(age / 1000)} s old`, j.data);
  return { state: "judging", judgement: j.data, frozen: null };
}
