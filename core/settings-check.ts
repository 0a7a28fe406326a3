import { safeText } from "./safe-text.js";
import { OriginSchema } from "./schema.js";
import { VALUE_FREE } from "./value-free-issue.js";

/**
 * Why an `ORIGIN_TEMPLATE` is unusable, or `null`: with `{pool}` replaced it must be a bare http(s)
 * origin. A template without `{pool}` is allowed: every undefined pool then shares one origin.
 */
export function originTemplateProblem(template: string): string | null {
  const r = OriginSchema.safeParse(template.replaceAll("{pool}", "probe-1"), VALUE_FREE);
  return r.success ? null : (r.error.issues[0]?.message ?? "not a bare http(s) origin");
}

/** Why a `ROUTING_PREFIX` is unusable, or `null`: it must start and end with `/`. */
export function routingPrefixProblem(prefix: string): string | null {
  return prefix.startsWith("/") && prefix.endsWith("/") && prefix.length > 1
    ? null
    : `"${safeText(prefix, 64)}" must start and end with "/"`;
}
