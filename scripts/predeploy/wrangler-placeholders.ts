import { cloudflareIdProblem } from "../../adapters/kv/cloudflare-id.js";

/** The KV binding the Worker reads its map from. */
const ROUTING_BINDING = "ROUTING";

/** Domains reserved for documentation (RFC 2606, RFC 6761): never a real zone or origin. */
const RESERVED_HOST = /(^|\.)(example\.(com|net|org)|example|invalid|test)\.?$/i;

/** What `[env.production]` of a parsed wrangler.toml holds, as far as this check reads it. */
interface ProductionEnv {
  readonly kv_namespaces?: readonly { readonly binding?: unknown; readonly id?: unknown }[];
  readonly routes?: readonly (
    | string
    | { readonly pattern?: unknown; readonly zone_name?: unknown }
  )[];
  readonly vars?: Readonly<Record<string, unknown>>;
}

const hostOf = (pattern: string): string => pattern.replace(/^\*?\.?/, "").split(/[/:]/)[0] ?? "";

/**
 * Every placeholder `[env.production]` of a parsed wrangler.toml still holds, one line each,
 * naming the field and what to put there: the ROUTING namespace id (32 hex characters, not the
 * template's `REPLACE_WITH_…` or all zeros), routes and zones on a documentation domain
 * (`example.com`), and an `ORIGIN_TEMPLATE` on one. Empty: nothing known to be a placeholder.
 */
export function wranglerPlaceholders(doc: unknown): string[] {
  const production = (doc as { env?: { production?: ProductionEnv } })?.env?.production;
  if (!production) return ["[env.production] is missing: `npm run deploy` ships that environment"];
  const problems: string[] = [];
  const routing = production.kv_namespaces?.find((n) => n?.binding === ROUTING_BINDING);
  const id = typeof routing?.id === "string" ? routing.id : "";
  const idProblem = id ? cloudflareIdProblem(id) : { message: "no id" };
  if (idProblem) {
    problems.push(
      `[[env.production.kv_namespaces]] binding "${ROUTING_BINDING}" id: ${idProblem.message}; \`npx wrangler kv namespace create ${ROUTING_BINDING} --env production\` prints the real one (the pusher's KV_NAMESPACE_ID is the same id)`,
    );
  }
  for (const route of production.routes ?? []) {
    const pattern = typeof route === "string" ? route : String(route.pattern ?? "");
    const zone = typeof route === "string" ? "" : String(route.zone_name ?? "");
    for (const [field, value, host] of [
      ["pattern", pattern, hostOf(pattern)],
      ["zone_name", zone, zone],
    ] as const) {
      if (value && RESERVED_HOST.test(host)) {
        problems.push(
          `[env.production] routes ${field} "${value}": a documentation domain; put the hostnames the edge serves, on a zone of this account`,
        );
      }
    }
  }
  const template = production.vars?.ORIGIN_TEMPLATE;
  if (typeof template === "string") {
    let host = "";
    try {
      host = new URL(template.replaceAll("{pool}", "probe-1")).hostname;
    } catch {
      host = "";
    }
    if (RESERVED_HOST.test(host)) {
      problems.push(
        `[env.production.vars] ORIGIN_TEMPLATE "${template}": a documentation domain; put your origins' names (the pusher's ORIGIN_TEMPLATE must match)`,
      );
    }
  }
  return problems;
}
