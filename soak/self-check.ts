import type { GrowthVerdict } from "./no-growth.js";

/** The planted-leak self-check's outcome: the line it prints and whether it passed. */
export interface SelfCheck {
  readonly ok: boolean;
  readonly line: string;
}

/**
 * With `--expect-fail FIGURES`, the run passes only if every figure named grew: a planted leak
 * that the no-growth test missed is a failed self-check (soak/README.md, "The planted leak").
 */
export function selfCheck(
  growth: readonly GrowthVerdict[],
  expectFail: readonly string[],
): SelfCheck {
  const grew = [...new Set(growth.filter((g) => g.status === "fail").map((g) => g.figure))].sort();
  const want = [...expectFail].sort();
  const ok = grew.length > 0 && want.every((f) => (grew as string[]).includes(f));
  return {
    ok,
    line: ok
      ? `self-check passed: the planted leak was caught (grew: ${grew.join(", ")})`
      : `self-check FAILED: expected growth of ${want.join(", ")}, saw ${grew.join(", ") || "none"}`,
  };
}
