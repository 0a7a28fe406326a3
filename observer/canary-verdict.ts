import type { CanaryGates, CanaryVerdict } from "../core/index.js";
import type { CanaryFigures } from "./canary-figures.js";

/** A verdict on a canary's gates and the figures behind it, in one line. */
export interface CanaryGateResult {
  readonly verdict: CanaryVerdict;
  readonly detail: string;
}

const pct = (ratio: number) => `${(Math.round(ratio * 1000) / 10).toFixed(1)} %`;

/**
 * Judges `gates` on `figures` (docs/reference.md §13): `waiting` until each side has
 * `min_samples` requests in the compared cells; then `failing` when the canary's error ratio
 * exceeds stable's by more than `errors_pt` points or its p90 exceeds stable's × `p90_factor` +
 * `p90_plus_ms` (a side without a first byte has no p90: the error gate judges it), else
 * `passing`. The detail names every gate with its figures, so the audit record says why.
 */
export function judgeGates(figures: CanaryFigures, gates: CanaryGates): CanaryGateResult {
  const { canary, stable } = figures;
  const scope = `canary ${canary.samples} requests, stable ${stable.samples}, in ${figures.countries.join(" ") || "no country"} over ${figures.minutes} minute(s)`;
  if (canary.samples < gates.min_samples || stable.samples < gates.min_samples)
    return {
      verdict: "waiting",
      detail: `waiting for ${gates.min_samples} requests a side: ${scope}`,
    };
  const errorLimit = stable.error_ratio + gates.errors_pt / 100;
  const errorsFail = canary.error_ratio > errorLimit + 1e-9;
  const errorsText = `errors ${pct(canary.error_ratio)} ${errorsFail ? ">" : "<="} stable ${pct(stable.error_ratio)} + ${gates.errors_pt} pt`;
  let p90Fail = false;
  let p90Text = "p90 not judged (a side got no first byte)";
  if (canary.p90_ms !== null && stable.p90_ms !== null) {
    const limit = Math.round(stable.p90_ms * gates.p90_factor + gates.p90_plus_ms);
    p90Fail = canary.p90_ms > limit;
    p90Text = `p90 ${canary.p90_ms} ms ${p90Fail ? ">" : "<="} stable ${stable.p90_ms} ms × ${gates.p90_factor} + ${gates.p90_plus_ms} ms = ${limit} ms`;
  }
  const failed = [errorsFail ? errorsText : null, p90Fail ? p90Text : null].filter(
    (t): t is string => t !== null,
  );
  return failed.length > 0
    ? { verdict: "failing", detail: `gate failed: ${failed.join("; ")} (${scope})` }
    : { verdict: "passing", detail: `gates hold: ${errorsText}; ${p90Text} (${scope})` };
}
