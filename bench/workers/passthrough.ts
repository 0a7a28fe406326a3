import type { Route } from "../../core/contract/compiled-map.js";
import { OutlierEjection } from "../../worker/outlier-ejection.js";
import { proxyToOrigins } from "../../worker/proxy.js";

const ejection = new OutlierEjection();

/** Bindings of the pass-through Worker. */
interface PassEnv {
  readonly ORIGIN: string;
}

/**
 * The baseline of the Worker-overhead figure: the routing Worker's own proxy code with a fixed
 * origin, and nothing else (no KV read, no map, no country lookup, no edge headers).
 */
export default {
  async fetch(request: Request, env: PassEnv): Promise<Response> {
    const link = { pool: "fixed", origin: env.ORIGIN };
    const route: Route = { ...link, chain: [link], source: "fixed", degraded: null };
    const outcome = await proxyToOrigins(request, route, {
      country: "XX",
      rev: 0,
      maxAttempts: 1,
      originTimeoutMs: 4000,
      hedgeMs: 1000,
      signingSecrets: [],
      onceTimeoutMs: 30_000,
      ejection,
      ejectionSettings: { ejectAfter: 2, ejectMs: 10_000 },
      background: undefined,
    });
    return outcome.response;
  },
};
