import { isRuleTarget } from "../../core/index.js";
import { CliError } from "./cli-error.js";

/** Parses a `CC` argument: an ISO 3166-1 alpha-2 code (any case), `XX`, `T1` or `_default`. */
export function parseCountryArgument(raw: string): string {
  const cc = raw === "_default" ? raw : raw.trim().toUpperCase();
  if (!isRuleTarget(cc)) {
    throw new CliError(
      "invalid-input",
      `"${raw}" is not a country: use an ISO 3166-1 alpha-2 code, XX, T1 or _default`,
    );
  }
  return cc;
}
