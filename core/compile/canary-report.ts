import { safeText } from "../contract/safe-text.js";
import {
  CANARY_JUDGEMENT_STALE_MS,
  type CanaryJudgement,
  type CanarySideFigures,
  type CanaryVerdict,
} from "../intent/canary-judgement-schema.js";
import type { Canary } from "../intent/canary-schema.js";

/**
 * Why a running canary is frozen (docs/reference.md §13), or `null` while its judge judges it:
 * no judgement, one of another canary, or one older than {@link CANARY_JUDGEMENT_STALE_MS}. A
 * frozen canary keeps its share and is never promoted without a judgement.
 */
export function canaryFrozenReason(
  canary: Canary,
  judgement: CanaryJudgement | undefined,
  nowMs: number,
): string | null {
  if (!judgement) return "no judge: canary/judgement is absent";
  if (judgement.id !== canary.id)
    return `canary/judgement judges ${judgement.id}, not ${canary.id}`;
  const age = nowMs - Date.parse(judgement.judged_at);
  return age > CANARY_JUDGEMENT_STALE_MS
    ? `the last judgement is ${Math.round(age / 1000)} s old`
    : null;
}

/** The running canary as `/status` and `/metrics` show it. */
export interface CanaryReport {
  readonly id: string;
  readonly share: number;
  readonly started_at: string;
  readonly for_s: number;
  /** Seconds since it started. */
  readonly age_s: number;
  readonly state: "judging" | "frozen";
  /** Why it is frozen; `null` while judged. */
  readonly frozen: string | null;
  /** The latest judgement of this canary, fresh or not (`null`: none). */
  readonly verdict: CanaryVerdict | null;
  readonly judged_at: string | null;
  readonly passing_since: string | null;
  readonly canary_side: CanarySideFigures | null;
  readonly stable_side: CanarySideFigures | null;
  /** The gates with their figures, in one line. */
  readonly detail: string | null;
}

/** The report of the running canary at `nowMs`, or `null` when none runs. */
export function canaryReport(
  canary: Canary | undefined,
  judgement: CanaryJudgement | undefined,
  nowMs: number,
): CanaryReport | null {
  if (!canary) return null;
  const own = judgement?.id === canary.id ? judgement : undefined;
  const frozen = canaryFrozenReason(canary, judgement, nowMs);
  return {
    id: canary.id,
    share: canary.share,
    started_at: canary.started_at,
    for_s: canary.for_s,
    age_s: Math.max(0, Math.round((nowMs - Date.parse(canary.started_at)) / 1000)),
    state: frozen === null ? "judging" : "frozen",
    frozen,
    verdict: own?.verdict ?? null,
    judged_at: own?.judged_at ?? null,
    passing_since: own?.passing_since ?? null,
    canary_side: own?.canary ?? null,
    stable_side: own?.stable ?? null,
    detail: own?.detail ?? null,
  };
}

/**
 * The canary in one line, for a terminal (the judge's detail is etcd text: escaped):
 * `canary c12: 10 % of its routes' viewers for 240 s (--for 600 s), judged passing since …`.
 */
export function describeCanary(r: CanaryReport): string {
  const head = `canary ${r.id}: ${r.share} % of its routes' viewers for ${r.age_s} s (--for ${r.for_s} s)`;
  if (r.frozen !== null) return `${head}, FROZEN: ${r.frozen}; never promoted without a judgement`;
  const since = r.passing_since ? ` since ${r.passing_since}` : "";
  return `${head}, judged ${r.verdict ?? "not yet"}${since}${r.detail ? `: ${safeText(r.detail, 400)}` : ""}`;
}
