import { parseRuleTarget, type RuleTarget, ruleTargetName } from "../../core/index.js";
import { CliError } from "./cli-error.js";

/**
 * Parses a `CC` argument that may also name a continent: a country code (any case), `XX`, `T1`,
 * `_default`, `AN`/`EU`/`OC`, or `continent/K` for any continent (`AF AS NA SA` alone are the
 * countries Afghanistan, American Samoa, Namibia and Saudi Arabia). Returns the target and its
 * canonical name, as it follows `override/`.
 */
export function parseTargetArgument(raw: string): { target: RuleTarget; name: string } {
  const trimmed = raw.trim();
  const lower = trimmed.toLowerCase();
  const text =
    trimmed === "_default"
      ? trimmed
      : lower.startsWith("continent/")
        ? `continent/${trimmed.slice("continent/".length).toUpperCase()}`
        : trimmed.toUpperCase();
  const target = parseRuleTarget(text);
  if (!target) {
    throw new CliError(
      "invalid-input",
      `"${raw}" is not a country or continent: use an ISO 3166-1 alpha-2 code, XX, T1, _default, AN, EU, OC or continent/K`,
    );
  }
  return { target, name: ruleTargetName(target) };
}
