import { OBSERVATION_WINDOW_S, type ObservationsBody } from "../../core/contract/observations.js";
import { plainResponse } from "../plain-response.js";
import { observationRows } from "./observation-rows.js";
import { observeAccess } from "./observe-access.js";
import { type ObserveVars, observeSettings } from "./observe-settings.js";
import {
  type AggregatorBinding,
  type AggregatorNamespace,
  OBSERVE_SHARDS,
  shardStub,
} from "./shards.js";
import { minuteOf, type TallyRow } from "./tally-row.js";
import { tallyRowsOf } from "./tally-rows-shape.js";

/** Why `/__edge/observations` could not answer with rows. */
export type ObservationsErrorCode =
  | "bad-window"
  | "bad-grouping"
  | "aggregator-missing"
  | "aggregator-unavailable";

/** How long one shard may take to answer a read. */
const SHARD_READ_TIMEOUT_MS = 2000;

const NO_STORE = { "Cache-Control": "no-store" } as const;

function failure(status: number, error: ObservationsErrorCode, detail: string): Response {
  return Response.json({ error, detail }, { status, headers: NO_STORE });
}

/** `window` in whole seconds, 1–900 (absent: 60); `null` for anything else. */
function windowOf(url: URL): number | null {
  const raw = url.searchParams.get("window");
  if (raw === null) return OBSERVATION_WINDOW_S.fallback;
  if (!/^\d{1,4}$/.test(raw)) return null;
  const s = Number(raw);
  return s >= 1 && s <= OBSERVATION_WINDOW_S.max ? s : null;
}

class ShardUnavailable extends Error {
  readonly shard: number;
  constructor(shard: number) {
    super(`aggregator shard ${shard} did not answer`);
    this.shard = shard;
  }
}

async function readShard(ns: AggregatorNamespace, i: number, since: number): Promise<TallyRow[]> {
  try {
    const res = await shardStub(ns, i).fetch(`https://observations.internal/read?since=${since}`, {
      signal: AbortSignal.timeout(SHARD_READ_TIMEOUT_MS),
    });
    const rows = res.ok ? tallyRowsOf(await res.json()) : null;
    if (rows === null) throw new ShardUnavailable(i);
    return rows;
  } catch {
    throw new ShardUnavailable(i);
  }
}

/**
 * `GET /__edge/observations?window=SECONDS[&by=minute]` (docs/reference.md §12): what viewers
 * got per (country, pool), from every aggregator shard. A 404 while `OBSERVE_TOKEN` is unset, as
 * every unknown `/__edge/` path; 401 without `Authorization: Bearer <OBSERVE_TOKEN>`. The window
 * rounds out to whole minutes (`since`). Only countries, pools and counts: never an origin.
 */
export async function observationsRoute(
  request: Request,
  env: ObserveVars & AggregatorBinding,
): Promise<Response> {
  const settings = observeSettings(env);
  if (settings.token === null) return plainResponse(404, "Not Found");
  if (!observeAccess(request.headers.get("Authorization"), settings.token)) {
    const res = plainResponse(401, "Unauthorized");
    res.headers.set("WWW-Authenticate", 'Bearer realm="edge observations"');
    return res;
  }
  const url = new URL(request.url);
  const windowS = windowOf(url);
  if (windowS === null) {
    return failure(
      400,
      "bad-window",
      `window must be whole seconds, 1-${OBSERVATION_WINDOW_S.max}`,
    );
  }
  const by = url.searchParams.get("by");
  if (by !== null && by !== "minute") return failure(400, "bad-grouping", "by must be minute");
  const ns = env.OBSERVATIONS;
  if (ns === undefined) {
    return failure(503, "aggregator-missing", "the Worker has no OBSERVATIONS binding");
  }
  const now = Date.now();
  const since = minuteOf(now - windowS * 1000);
  let rows: TallyRow[];
  try {
    const shards = await Promise.all(
      Array.from({ length: OBSERVE_SHARDS }, (_, i) => readShard(ns, i, since)),
    );
    rows = shards.flat();
  } catch (err) {
    const detail = err instanceof ShardUnavailable ? err.message : "aggregator read failed";
    return failure(503, "aggregator-unavailable", detail);
  }
  const body: ObservationsBody = {
    window_s: windowS,
    since: new Date(since * 60_000).toISOString(),
    until: new Date(now).toISOString(),
    rows: observationRows(rows, by === "minute"),
  };
  return Response.json(body, { headers: NO_STORE });
}
