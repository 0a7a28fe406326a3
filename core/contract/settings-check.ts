import { isHeaderSafe } from "./header-safe.js";
import { originProblem } from "./origin-check.js";
import { safeText } from "./safe-text.js";

/**
 * Why an `ORIGIN_TEMPLATE` is unusable, or `null`: with `{pool}` replaced it must be a bare http(s)
 * origin. A template without `{pool}` is allowed: every undefined pool then shares one origin.
 * The compiled map carries the templated text as it is, and the Worker's map check refuses an
 * origin a header cannot carry, so the template must be printable ASCII (an IDN host in its
 * `xn--` form).
 */
export function originTemplateProblem(template: string): string | null {
  if (!isHeaderSafe(template)) {
    return "must be printable ASCII (write an international host name in its xn-- form)";
  }
  return originProblem(template.replaceAll("{pool}", "probe-1"));
}

/** Why a `ROUTING_PREFIX` is unusable, or `null`: it must start and end with `/`. */
export function routingPrefixProblem(prefix: string): string | null {
  return prefix.startsWith("/") && prefix.endsWith("/") && prefix.length > 1
    ? null
    : `"${safeText(prefix, 64)}" must start and end with "/"`;
}
