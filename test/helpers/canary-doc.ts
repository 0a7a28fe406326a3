import { type Canary, DEFAULT_CANARY_GATES } from "../../core/index.js";

/** A running canary's `canary/current` value for tests: `changes` as relative key → value (null: removed). */
export function canaryDoc(changes: Record<string, unknown>, extra: Partial<Canary> = {}): Canary {
  return {
    id: "c8",
    epoch: 8,
    started_at: "2026-11-29T14:59:00.000Z",
    share: 10,
    for_s: 600,
    gates: { ...DEFAULT_CANARY_GATES },
    changes: Object.entries(changes)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, v]) => ({
        key,
        before: null,
        after: v === null ? null : typeof v === "string" ? v : JSON.stringify(v),
      })),
    by: "tester",
    reason: null,
    ...extra,
  };
}
