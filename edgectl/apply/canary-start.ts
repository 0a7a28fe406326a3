import { CANARY_KEY, type Canary, safeText } from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";
import type { CanaryRequest } from "./canary-flags.js";
import { formatGates } from "./canary-gates.js";
import type { KeyChange } from "./plan-diff.js";

const CANARYABLE = /^(pool|country|continent)\//;

/**
 * The one key a canary's commit writes: `canary/current` holding the proposed intent as changes
 * to the stable one (docs/reference.md §13), started by the commit that sets `epoch`. Throws
 * `invalid-input` for a change a canary cannot carry (a `fence/` key: fences are the same on
 * both sides, so they change only by a plain apply).
 */
export function canaryStartChange(
  prefix: string,
  changes: readonly KeyChange[],
  req: CanaryRequest,
  epoch: number,
  by: string,
  reason: string | undefined,
  now: Date,
): KeyChange {
  const refused = changes.filter((c) => !CANARYABLE.test(c.rel));
  if (refused.length > 0) {
    throw new CliError(
      "invalid-input",
      "a canary changes only pool/, country/ and continent/ keys; apply fence changes without --canary; nothing written",
      refused.map((c) => `${safeText(c.rel, 96)}: not canaryable`),
    );
  }
  const canary: Canary = {
    id: `c${epoch}`,
    epoch,
    started_at: now.toISOString(),
    share: req.share,
    for_s: req.forS,
    gates: req.gates,
    changes: changes.map((c) => ({
      key: c.rel,
      before: c.kind === "add" ? null : (c.before ?? null),
      after: c.kind === "remove" ? null : (c.after ?? null),
    })),
    by,
    reason: reason ?? null,
  };
  return {
    kind: "add",
    key: `${prefix}${CANARY_KEY}`,
    rel: CANARY_KEY,
    after: JSON.stringify(canary),
  };
}

/** The lines `apply --canary` prints after the plan: what the canary is and how it ends. */
export function canaryPlanLines(req: CanaryRequest, epoch: number): string[] {
  return [
    `Canary c${epoch}: ${req.share} % of each changed route's viewers take the new intent, the rest the current one;`,
    `  promoted after ${req.forS} s of passing gates, rolled back by the first failing one: ${formatGates(req.gates)}`,
  ];
}
