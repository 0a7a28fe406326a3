import type { CanaryGates } from "../../core/index.js";

const ERRORS = /^errors<=\+(\d+(?:\.\d+)?)pt$/;
const P90 = /^p90<=x(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?)ms)?$/;

/**
 * `--gate` (docs/reference.md §13): comma-separated terms, each overriding one default gate:
 * `errors<=+1pt` (the canary's error ratio at most stable's plus 1 percentage point) and
 * `p90<=x1.25+50ms` (its p90 at most stable's × 1.25 + 50 ms). Returns the gates, or the
 * message naming the term that is not one.
 */
export function parseGateExpression(
  text: string,
  base: CanaryGates,
): { ok: true; gates: CanaryGates } | { ok: false; message: string } {
  let gates = base;
  const terms = text.split(",").map((t) => t.trim().replace(/\s+/g, ""));
  if (terms.every((t) => t === "")) return { ok: false, message: "--gate: no gate given" };
  for (const term of terms) {
    const e = ERRORS.exec(term);
    if (e) {
      gates = { ...gates, errors_pt: Number(e[1]) };
      continue;
    }
    const p = P90.exec(term);
    if (p && Number(p[1]) >= 1) {
      gates = { ...gates, p90_factor: Number(p[1]), p90_plus_ms: Number(p[2] ?? 0) };
      continue;
    }
    return {
      ok: false,
      message: `--gate: ${JSON.stringify(term).slice(0, 80)} is not a gate (errors<=+1pt, p90<=x1.25+50ms; the factor at least 1)`,
    };
  }
  return { ok: true, gates };
}

/** The gates as `--gate` spells them: `errors<=+1pt,p90<=x1.25+50ms`. */
export function formatGates(g: CanaryGates): string {
  return `errors<=+${g.errors_pt}pt,p90<=x${g.p90_factor}+${g.p90_plus_ms}ms (min ${g.min_samples} samples a side)`;
}
