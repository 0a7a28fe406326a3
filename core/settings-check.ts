import { originProblem } from "./origin-check.js";
import { safeText } from "./safe-text.js";

/**
 * Why an `ORIGIN_TEMPLATE` is unusable, or `null`: with `{pool}` replaced it must be a bare http(s)
 * origin. A template without `{pool}` is allowed: every undefined pool then shares one origin.
 */
export function originTemplateProblem(template: string): string | null {
  return originProblem(template.replaceAll("{pool}", "probe-1"));
}

/** Why a `ROUTING_PREFIX` is unusable, or `null`: it must start and end with `/`. */
export function routingPrefixProblem(prefix: string): string | null {
  return prefix.startsWith("/") && prefix.endsWith("/") && prefix.length > 1
    ? null
    : `"${safeText(prefix, 64)}" must start and end with "/"`;
}
