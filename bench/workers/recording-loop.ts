import type { Route } from "../../core/contract/compiled-map.js";
import type { Env } from "../../worker/env.js";
import { observedProxy } from "../../worker/observe/observed-proxy.js";
import { ViewerRecorder } from "../../worker/observe/recorder.js";
import { edgeResponse } from "../../worker/respond.js";
import { PLAYER_CMCD } from "../lib/player-cmcd.js";

export { ObservationAggregator } from "../../worker/observe/aggregator.js";

const recorder = new ViewerRecorder();
let offEnv: Env | undefined;
const COUNTRIES = ["BR", "DE", "JP", "US"] as const;
const POOLS = ["fra-1", "gru-1"] as const;

/** A proxied segment as the edge returns it: the origin's response through `edgeResponse`. */
function proxiedSegment(country: string, pool: string): Response {
  const link = { pool, origin: `https://${pool}.origin.example` };
  const route: Route = { ...link, chain: [link], source: `country/${country}`, degraded: null };
  const origin = new Response("segment", {
    headers: {
      "Content-Type": "video/iso.segment",
      "Cache-Control": "public, max-age=31536000",
    },
  });
  return edgeResponse(
    { country, rev: 42, route, degraded: [] },
    { response: origin, link, tried: [pool] },
    {
      debug: false,
      originHosts: () => new Set([new URL(link.origin).host]),
      publicOrigin: () => ({ scheme: "https:", host: "edge.example" }),
    },
    "MISS",
  );
}

/**
 * The recording path alone, many times per request, so that its CPU stands clear of a request's
 * own (bench `observe.cpu_us_per_req`): `GET /?n=N&mode=on|off` runs the deployed Worker's
 * `observedProxy` N times around a proxy that returns a prepared response, with recording on, or
 * off as `OBSERVE="off"` turns it off. The requests carry a player's CMCD; countries and pools
 * rotate, so the isolate holds several rows and flushes them to the aggregator as deployed.
 */
export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n") ?? "1000");
    const on = url.searchParams.get("mode") === "on";
    offEnv ??= { ...env, OBSERVE: "off" };
    const loopEnv = on ? env : offEnv;
    const viewer = new Request(
      `https://edge.example/video/1080p/segment-17.m4s?CMCD=${encodeURIComponent(PLAYER_CMCD)}`,
    );
    const responses = COUNTRIES.flatMap((cc) => POOLS.map((pool) => proxiedSegment(cc, pool)));
    let statuses = 0;
    for (let i = 0; i < n; i++) {
      const prepared = responses[i % responses.length] as Response;
      const got = await observedProxy(viewer, loopEnv, ctx, recorder, async () => prepared);
      statuses += got.status;
    }
    return new Response(String(statuses / n));
  },
};
