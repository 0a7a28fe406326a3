import { compile, serializeMap } from "../../core/index.js";
import { judgeMapText } from "../../worker/map-order.js";
import { scaleFixture } from "../lib/fixture.js";
import { round, summarize } from "../lib/stats.js";

/** `worker.map_refresh_ms` in results.json. */
export interface MapRefreshResult {
  readonly p50: number;
  readonly max: number;
  readonly runs: number;
  readonly countries: number;
  readonly bytes: number;
}

/**
 * What an isolate pays to take a new map, measured with the Worker's own code in Node:
 * `judgeMapText` (JSON parse, schema validation, (history, rev) order) of a map with every ISO
 * country plus XX, T1 and the default, four pools each, a new revision every time (so no
 * same-text shortcut).
 */
export function mapRefresh(o: { readonly runs: number }): MapRefreshResult {
  const prefix = "/bench/refresh/";
  const entries = scaleFixture({ keys: 0, pools: 20 });
  const map = compile(
    { revision: 1, entries: entries.map((e) => ({ key: prefix + e.rel, value: e.value })) },
    {
      carried: null,
      prefix,
      floorPool: "p000",
      originTemplate: "https://{pool}.origin.example.com",
      now: new Date(),
    },
  ).map;
  const warmup = 50;
  const texts = Array.from({ length: warmup + o.runs }, (_, i) =>
    serializeMap({ ...map, rev: i + 2 }),
  );
  let held = map;
  const times: number[] = [];
  for (const [i, text] of texts.entries()) {
    const t0 = performance.now();
    const verdict = judgeMapText(text, held);
    const ms = performance.now() - t0;
    if (verdict.kind !== "newer") throw new Error(`map ${i} not taken: ${verdict.kind}`);
    held = verdict.map;
    if (i >= warmup) times.push(ms);
  }
  const s = summarize(times);
  return {
    p50: round(s.p50, 3),
    max: round(s.max, 3),
    runs: s.n,
    countries: Object.keys(map.countries).length + 1,
    bytes: Buffer.byteLength(texts[0] ?? ""),
  };
}
