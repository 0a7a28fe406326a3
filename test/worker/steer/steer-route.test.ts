import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { observationsWhen, rowOf } from "../../helpers/observations.js";
import { putSteerWorld, STEER_POOLS } from "./steer-world.js";

const DEBUG = "steer-debug-token";
const OBSERVE = "steer-observe-token";

interface HlsManifest {
  VERSION: number;
  TTL: number;
  "RELOAD-URI": string;
  "PATHWAY-PRIORITY": string[];
  "PATHWAY-CLONES"?: {
    "BASE-ID": string;
    ID: string;
    "URI-REPLACEMENT": { PARAMS: Record<string, string> };
  }[];
}

interface DashManifest {
  VERSION: number;
  TTL: number;
  "RELOAD-URI": string;
  "PATHWAY-PRIORITY": string[];
  "SERVICE-LOCATION-PRIORITY": string[];
}

describe("/__edge/steer/hls and /__edge/steer/dash (docs/reference.md §15)", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(STEER_POOLS);
    worker = await startWorker({
      FLOOR_POOL: "use-1",
      DEBUG_TOKEN: DEBUG,
      OBSERVE_TOKEN: OBSERVE,
      OBSERVE_FLUSH_SECONDS: "0",
      STEER_TTL_SECONDS: "12",
      EDGE_EJECT_AFTER: "1",
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(async () => {
    for (const o of origins.all) o.reset();
    await putSteerWorld(worker, origins);
  });

  it("answers the HLS manifest: the viewer's chain, TTL, RELOAD-URI with the session, clones of the playlist's pathway", async () => {
    const res = await worker.dispatch("/__edge/steer/hls?base=fra-1", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("cache-control")).toBe("private, no-store");
    expect(res.json<HlsManifest>()).toEqual({
      VERSION: 1,
      TTL: 12,
      "RELOAD-URI": "/__edge/steer/hls?base=fra-1",
      "PATHWAY-PRIORITY": ["fra-1", "ams-1", "par-1"],
      "PATHWAY-CLONES": [
        {
          "BASE-ID": "fra-1",
          ID: "ams-1",
          "URI-REPLACEMENT": { PARAMS: { edge_pathway: "ams-1" } },
        },
        {
          "BASE-ID": "fra-1",
          ID: "par-1",
          "URI-REPLACEMENT": { PARAMS: { edge_pathway: "par-1" } },
        },
      ],
    });
    // No origin is asked to answer a steering request.
    expect(origins.all.every((o) => o.hits === 0)).toBe(true);
  });

  it("answers the DASH-IF manifest with PATHWAY-PRIORITY and the draft's SERVICE-LOCATION-PRIORITY", async () => {
    const res = await worker.dispatch("/__edge/steer/dash?_DASH_pathway=fra-1", {
      country: "DE",
    });
    expect(res.json<DashManifest>()).toEqual({
      VERSION: 1,
      TTL: 12,
      "RELOAD-URI": "/__edge/steer/dash",
      "PATHWAY-PRIORITY": ["fra-1", "ams-1", "par-1"],
      "SERVICE-LOCATION-PRIORITY": ["fra-1", "ams-1", "par-1"],
    });
  });

  it("leaves out unhealthy pools, and never offers a fenced viewer a pool outside its fence", async () => {
    await putSteerWorld(worker, origins, { "health/fra-1": { status: "unhealthy" } });
    const de = await worker.dispatch("/__edge/steer/hls?base=fra-1", { country: "DE" });
    const m = de.json<HlsManifest>();
    expect(m["PATHWAY-PRIORITY"]).toEqual(["ams-1", "par-1"]);
    expect(m["PATHWAY-CLONES"]?.map((c) => c.ID)).toEqual(["ams-1", "par-1"]);
    expect(de.body).not.toContain("use-1");
    // FR follows _default (use-1 > par-1); its fence keeps only par-1.
    const fr = await worker.dispatch("/__edge/steer/hls?base=use-1", { country: "FR" });
    expect(fr.json<HlsManifest>()["PATHWAY-PRIORITY"]).toEqual(["par-1"]);
    expect(fr.json<HlsManifest>()["PATHWAY-CLONES"]?.map((c) => c.ID)).toEqual(["par-1"]);
    const us = await worker.dispatch("/__edge/steer/hls", { country: "US" });
    expect(us.json<HlsManifest>()["PATHWAY-PRIORITY"]).toEqual(["use-1", "par-1"]);
  });

  it("follows a boost: an override's pool comes first", async () => {
    await putSteerWorld(worker, origins, {
      "override/DE": { primary: "par-1", fallbacks: ["fra-1"] },
    });
    const res = await worker.dispatch("/__edge/steer/hls?base=fra-1", { country: "DE" });
    expect(res.json<HlsManifest>()["PATHWAY-PRIORITY"]).toEqual(["par-1", "fra-1"]);
  });

  it("leaves out a pool the isolate has ejected", async () => {
    const worker2 = await startWorker({ FLOOR_POOL: "use-1", EDGE_EJECT_AFTER: "1" });
    const dead = await startOrigins(["fra-1", "ams-1", "par-1", "use-1"]);
    try {
      await putSteerWorld(worker2, dead);
      await dead.get("fra-1").kill();
      const seg = await worker2.dispatch("/seg.ts", { country: "DE" });
      expect(seg.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
      const res = await worker2.dispatch("/__edge/steer/dash", { country: "DE" });
      expect(res.json<DashManifest>()["SERVICE-LOCATION-PRIORITY"]).toEqual(["ams-1", "par-1"]);
    } finally {
      await worker2.dispose();
      await dead.close();
    }
  });

  it("puts each viewer's sticky pick first, so split shares hold across viewers", async () => {
    await putSteerWorld(worker, origins, {
      "country/DE": { primary: "fra-1", fallbacks: ["ams-1"], weights: { "fra-1": 3, "ams-1": 1 } },
    });
    const firsts = new Map<string, number>();
    for (let i = 0; i < 400; i++) {
      const viewer = `viewer-${i}`;
      const headers = { "X-Edge-Debug-Token": DEBUG, "X-Edge-Debug-Viewer": viewer };
      const m = (
        await worker.dispatch("/__edge/steer/hls", { country: "DE", headers })
      ).json<HlsManifest>();
      const first = m["PATHWAY-PRIORITY"][0] ?? "";
      firsts.set(first, (firsts.get(first) ?? 0) + 1);
      expect(m["PATHWAY-PRIORITY"]).toHaveLength(2);
      if (i % 50 === 0) {
        // The same viewer's segment requests take the pool its manifest puts first.
        const seg = await worker.dispatch("/seg.ts", { country: "DE", headers });
        expect(seg.headers.get("x-edge-pool")).toBe(first);
      }
    }
    const fra = firsts.get("fra-1") ?? 0;
    expect(fra / 400).toBeGreaterThan(0.65);
    expect(fra / 400).toBeLessThan(0.85);
  });

  it("keeps a viewer's answer while nothing changes, whatever pathway the player reports", async () => {
    await putSteerWorld(worker, origins, {
      "country/CH": { primary: "fra-1", fallbacks: ["ams-1"], weights: { "fra-1": 1, "ams-1": 1 } },
    });
    const headers = { "X-Edge-Debug-Token": DEBUG, "X-Edge-Debug-Viewer": "steady-viewer" };
    const answers = new Set<string>();
    for (const [i, reported] of ["fra-1", "ams-1", "par-1", "", "fra-1"].entries()) {
      for (let n = 0; n < 6; n++) {
        const res = await worker.dispatch(
          `/__edge/steer/hls?base=fra-1&_HLS_pathway=${reported}&_HLS_throughput=${1000 * (i + n)}`,
          { country: "CH", headers },
        );
        answers.add(res.body);
      }
    }
    expect(answers.size).toBe(1);
    expect(JSON.parse([...answers][0] ?? "{}")["PATHWAY-PRIORITY"]).toHaveLength(2);
  });

  it("a fenced country with no pool inside its fence gets 503 with Retry-After, never another pool", async () => {
    await putSteerWorld(worker, origins, {
      "fence/eu": { continents: ["EU"], regions: ["mars"], floor: "par-1" },
    });
    const res = await worker.dispatch("/__edge/steer/hls", { country: "DE" });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("12");
    expect(res.headers.get("x-edge-degraded")).toBe("fence-unsatisfiable");
    expect(res.body).not.toContain("use-1");
  });

  it("records the pathway and throughput players report (§12), and nothing for a pathway not theirs", async () => {
    for (let i = 0; i < 3; i++)
      await worker.dispatch(
        "/__edge/steer/hls?base=fra-1&_HLS_pathway=ams-1&_HLS_throughput=4000000",
        {
          country: "DE",
        },
      );
    await worker.dispatch("/__edge/steer/dash?_DASH_pathway=not-mine&_DASH_throughput=800000", {
      country: "DE",
    });
    // dash.js: a quoted list of the pathways used since the last reload, the latest last.
    await worker.dispatch('/__edge/steer/dash?_DASH_pathway="fra-1,par-1"&_DASH_throughput=', {
      country: "DE",
    });
    const body = await observationsWhen(
      worker,
      OBSERVE,
      (b) => (rowOf(b, "DE", "ams-1")?.requests ?? 0) >= 3 && rowOf(b, "DE", "par-1") !== undefined,
    );
    const ams = rowOf(body, "DE", "ams-1");
    expect(ams?.outcomes.ok).toBe(3);
    expect(ams?.ttfb_ms.p50).toBeNull();
    expect(ams?.throughput_kbps_p50).toBeGreaterThan(2000);
    expect(rowOf(body, "DE", "not-mine")).toBeUndefined();
    expect(rowOf(body, "DE", "par-1")?.requests).toBe(1);
    // Steering requests are no viewer requests of a pool: none counted without a report.
    expect(rowOf(body, "DE", "-")).toBeUndefined();
  });
});

describe("a steering request storm (docs/reference.md §15)", () => {
  it("gets 429 with Retry-After past STEER_RATE, while segment requests are served", async () => {
    const origins = await startOrigins(STEER_POOLS);
    const worker = await startWorker({ FLOOR_POOL: "use-1", STEER_RATE: "20" });
    try {
      await putSteerWorld(worker, origins);
      const storm = await Promise.all(
        Array.from({ length: 200 }, () => worker.dispatch("/__edge/steer/hls", { country: "DE" })),
      );
      const refused = storm.filter((r) => r.status === 429);
      expect(refused.length).toBeGreaterThan(100);
      expect(storm.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(20);
      for (const r of refused) expect(r.headers.get("retry-after")).toBe("30");
      const seg = await worker.dispatch("/seg.ts", { country: "DE" });
      expect(seg.status).toBe(200);
      expect(seg.headers.get("x-edge-pool")).toBe("fra-1");
    } finally {
      await worker.dispose();
      await origins.close();
    }
  });
});
