import {
  type CanaryGates,
  DEFAULT_CANARY_FOR_S,
  DEFAULT_CANARY_GATES,
  MAX_CANARY_SHARE,
  parseDuration,
} from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";
import { parseGateExpression } from "./canary-gates.js";

/** What `--canary PERCENT [--for DURATION] [--gate EXPR] [--min-samples N]` asks for. */
export interface CanaryRequest {
  readonly share: number;
  readonly forS: number;
  readonly gates: CanaryGates;
}

/** The raw flags as commander hands them over. */
export interface CanaryFlags {
  readonly canary?: string;
  readonly for?: string;
  readonly gate?: string;
  readonly minSamples?: string;
}

/**
 * The canary the flags ask for, or `null` without `--canary` (a plain commit; `--for`, `--gate`
 * and `--min-samples` without it are refused). Throws `invalid-input` naming the flag.
 */
export function canaryRequestOf(flags: CanaryFlags): CanaryRequest | null {
  if (flags.canary === undefined) {
    const stray = (["for", "gate", "minSamples"] as const).find((f) => flags[f] !== undefined);
    if (stray) {
      const name = stray === "minSamples" ? "--min-samples" : `--${stray}`;
      throw new CliError("invalid-input", `${name} needs --canary PERCENT; nothing written`);
    }
    return null;
  }
  const share = /^\d{1,3}$/.test(flags.canary.trim()) ? Number(flags.canary.trim()) : Number.NaN;
  if (!(share >= 1 && share <= MAX_CANARY_SHARE)) {
    throw new CliError(
      "invalid-input",
      `--canary: a whole percent from 1 to ${MAX_CANARY_SHARE}; nothing written`,
    );
  }
  const forS = flags.for === undefined ? DEFAULT_CANARY_FOR_S : parseDuration(flags.for);
  if (forS === null || forS > 7 * 86_400) {
    throw new CliError("invalid-input", "--for: a duration such as 90s, 10m or 2h (at most 7d)");
  }
  let gates: CanaryGates = { ...DEFAULT_CANARY_GATES };
  if (flags.minSamples !== undefined) {
    const n = /^\d{1,9}$/.test(flags.minSamples.trim()) ? Number(flags.minSamples) : 0;
    if (n < 1) throw new CliError("invalid-input", "--min-samples: a whole number from 1");
    gates = { ...gates, min_samples: n };
  }
  if (flags.gate !== undefined) {
    const parsed = parseGateExpression(flags.gate, gates);
    if (!parsed.ok) throw new CliError("invalid-input", parsed.message);
    gates = parsed.gates;
  }
  return { share, forS, gates };
}
