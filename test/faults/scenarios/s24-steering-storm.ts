import { serializeMap } from "../../../core/index.js";
import { buildMap } from "../../../testkit/map-builder.js";
import { startOrigins } from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { Invariants, type Scenario } from "../scenario.js";

const POOLS = ["fra-1", "ams-1"] as const;
const HLS = "application/vnd.apple.mpegurl";
const DASH = "application/dash+xml";
/** Steering requests one isolate answers per second before 429 (`STEER_RATE`). */
const RATE = 50;
const TTL_S = 15;
const MULTIVARIANT = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\nv0.m3u8\n";
const MPD =
  '<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><Period id="0"></Period></MPD>\n';

/** Playlists the edge must pass through byte for byte (docs/reference.md §15), by path. */
const UNTOUCHED: Readonly<Record<string, { body: string; type: string }>> = {
  "/live/bad.m3u8": { body: "<html>oops</html>\n#EXT-X-STREAM-INF:\nx", type: HLS },
  "/live/huge.m3u8": {
    body: `${MULTIVARIANT}${'#EXT-X-SESSION-DATA:DATA-ID="x",VALUE="y"\n'.repeat(250_000)}`,
    type: HLS,
  },
  "/live/own.m3u8": {
    body: MULTIVARIANT.replace(
      "#EXTM3U\n",
      '#EXTM3U\n#EXT-X-CONTENT-STEERING:SERVER-URI="https://steer.example/s"\n',
    ),
    type: HLS,
  },
  "/vod/bad.mpd": { body: '<MPD type="static"', type: DASH },
  "/vod/own.mpd": {
    body: MPD.replace("<Period", "<ContentSteering>https://s.example/</ContentSteering><Period"),
    type: DASH,
  },
};

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

export const steeringStorm: Scenario = {
  id: 24,
  title: "a storm of steering requests, and playlists the edge must not touch",
  invariant:
    "past STEER_RATE a steering storm is answered 429 with Retry-After (the manifest's TTL) and never 5xx, segment requests keep their latency (p90 within 3× the same run's calm phase + 30 ms), and malformed, 10 MB or already steering playlists and MPDs pass through byte for byte during it (docs/reference.md §15)",
  budgetMs: (q) => (q ? 90_000 : 180_000),
  async run(ctx) {
    const inv = new Invariants();
    const phaseMs = ctx.quick ? 4_000 : 12_000;
    const origins = await startOrigins([...POOLS]);
    ctx.defer(() => origins.close());
    for (const o of origins.all) {
      o.respond((req) => {
        const path = req.url.split("?")[0] ?? "";
        const fixed = UNTOUCHED[path];
        if (fixed)
          return { status: 200, headers: { "content-type": fixed.type }, body: fixed.body };
        if (path === "/live/master.m3u8")
          return { status: 200, headers: { "content-type": HLS }, body: MULTIVARIANT };
        return { status: 200, headers: { "content-type": "video/mp2t" }, body: `segment ${path}` };
      });
    }
    const worker = await startWorker(
      { STEER: "on", STEER_RATE: String(RATE), STEER_TTL_SECONDS: String(TTL_S) },
      { observations: false },
    );
    ctx.defer(() => worker.dispose());
    await worker.putMap(
      serializeMap(
        buildMap(
          { default: { chain: [...POOLS], source: "country/_default" } },
          { rev: 1, originOf: (p) => origins.get(p).url },
        ),
      ),
    );

    /** Segment loops for `ms`: each request's latency, checking every answer. */
    const segments = async (ms: number): Promise<number[]> => {
      const until = Date.now() + ms;
      const took: number[] = [];
      let i = 0;
      const loop = async () => {
        while (Date.now() < until) {
          const path = `/video/seg-${i++ % 50}.ts`;
          const t = performance.now();
          const res = await worker.dispatch(path);
          took.push(performance.now() - t);
          inv.check(
            res.status === 200 && res.body === `segment ${path}`,
            "a segment not served",
            () => `${path}: ${res.status} ${res.body.slice(0, 40)}`,
          );
        }
      };
      await Promise.all(Array.from({ length: 4 }, loop));
      return took.sort((a, b) => a - b);
    };

    ctx.progress("calm phase: segments alone");
    const calm = await segments(phaseMs);

    ctx.progress("storm phase: steering requests from 16 loops beside the same segments");
    let stop = false;
    const storm = { ok: 0, refused: 0 };
    const stormLoop = async (n: number) => {
      while (!stop) {
        const res = await worker.dispatch(`/__edge/steer/hls?base=fra-1&_HLS_pathway=fra-1&s=${n}`);
        if (res.status === 200) storm.ok += 1;
        else if (res.status === 429) {
          storm.refused += 1;
          inv.check(
            res.headers.get("retry-after") === String(TTL_S),
            "a 429 without Retry-After of the TTL",
            () => `Retry-After ${res.headers.get("retry-after")}`,
          );
        } else inv.check(false, "a steering answer neither 200 nor 429", () => `${res.status}`);
      }
    };
    const stormStart = Date.now();
    const stormers = Promise.all(Array.from({ length: 16 }, (_, n) => stormLoop(n)));
    const stormy = await segments(phaseMs);
    // Still in the storm, after the segments' measure (a 10 MB body takes a core of its own).
    for (const [path, { body }] of Object.entries(UNTOUCHED)) {
      const res = await worker.dispatch(path);
      inv.check(
        res.status === 200 && res.body === body,
        "a playlist the edge must not touch was changed",
        () => `${path}: ${res.status}, ${res.body.length} of ${body.length} bytes`,
      );
    }
    const steered = await worker.dispatch("/live/master.m3u8");
    inv.check(
      steered.body.includes("#EXT-X-CONTENT-STEERING:"),
      "a plain multivariant playlist not steered",
      () => steered.body.slice(0, 120),
    );
    stop = true;
    await stormers;
    const stormS = (Date.now() - stormStart) / 1000;

    inv.check(storm.refused > 0, "the storm was never refused", () => `${storm.ok} answered 200`);
    // One second of tokens to start with, then RATE per second (per isolate; Miniflare runs one).
    const allowed = RATE * (stormS + 1) * 1.2;
    inv.check(
      storm.ok <= allowed,
      "more steering answers than STEER_RATE allows",
      () => `${storm.ok} in ${stormS.toFixed(1)} s, at most ${allowed.toFixed(0)}`,
    );
    const calmP90 = percentile(calm, 0.9);
    const stormP90 = percentile(stormy, 0.9);
    inv.check(
      stormP90 <= 3 * calmP90 + 30,
      "segments slowed by the storm",
      () => `p90 ${stormP90.toFixed(1)} ms in the storm, ${calmP90.toFixed(1)} ms calm`,
    );
    return {
      runs: calm.length + stormy.length + storm.ok + storm.refused,
      figure: `${storm.ok} steering 200 + ${storm.refused} 429 in ${stormS.toFixed(1)} s; segment p50/p90 ${percentile(calm, 0.5).toFixed(1)}/${calmP90.toFixed(1)} ms calm, ${percentile(stormy, 0.5).toFixed(1)}/${stormP90.toFixed(1)} ms in the storm; ${Object.keys(UNTOUCHED).length} playlists untouched`,
      failures: inv.failures(),
    };
  },
};
