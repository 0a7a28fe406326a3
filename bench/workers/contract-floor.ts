import type { Route } from "../../core/contract/compiled-map.js";
import { normalizeCountry } from "../../core/contract/resolve.js";
import { OutlierEjection } from "../../worker/outlier-ejection.js";
import { proxyToOrigins } from "../../worker/proxy.js";

const ejection = new OutlierEjection();

/** Bindings of the contract-floor Worker. */
interface FloorEnv {
  readonly ORIGIN: string;
}

/**
 * The least a Worker meeting docs/reference.md §4 must add to the pass-through, and nothing of the routing
 * Worker's own: it reads `request.cf.country` (workerd parses and freezes the request's whole
 * `cf` object on that first read) and answers with `X-Edge-*` headers, which means rebuilding the
 * origin's response (a fetched response's headers are immutable) and, as §4's response rule
 * requires, dropping any `X-Edge-*` the origin sent, which only a pass over its header names can
 * find. No map, no decision, no origin hiding. The routing Worker measured against it shows what
 * its own code costs.
 */
export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const country = normalizeCountry(request.cf?.country);
    const link = { pool: "fixed", origin: env.ORIGIN };
    const route: Route = { ...link, chain: [link], source: "fixed", degraded: null };
    const outcome = await proxyToOrigins(request, route, {
      country,
      rev: 1,
      maxAttempts: 1,
      originTimeoutMs: 4000,
      hedgeMs: 1000,
      signingSecrets: [],
      onceTimeoutMs: 30_000,
      ejection,
      ejectionSettings: { ejectAfter: 2, ejectMs: 10_000 },
      background: undefined,
    });
    const response = new Response(outcome.response.body, outcome.response);
    const h = response.headers;
    const sent: string[] = [];
    for (const name of h.keys()) if (name.startsWith("x-edge-")) sent.push(name);
    for (const name of sent) h.delete(name);
    h.set("X-Edge-Pool", link.pool);
    h.set("X-Edge-Country", country);
    h.set("X-Edge-Revision", "1");
    h.set("X-Edge-Source", route.source);
    return response;
  },
};
