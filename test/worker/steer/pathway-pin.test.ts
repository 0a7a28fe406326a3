import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type Origins, type ReceivedRequest, startOrigins } from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { putSteerWorld, STEER_POOLS } from "./steer-world.js";

describe("edge_pathway pins a request to a pool (docs/reference.md §15)", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(STEER_POOLS);
    worker = await startWorker({ MAX_ATTEMPTS: "4", FLOOR_POOL: "use-1", EDGE_EJECT_AFTER: "1" });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(async () => {
    for (const o of origins.all) o.reset();
    await putSteerWorld(worker, origins);
  });

  it("serves a pool of the viewer's chain, and the parameter never reaches the origin", async () => {
    const res = await worker.dispatch("/live/v0.m3u8?token=abc&edge_pathway=ams-1&x=1", {
      country: "DE",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.headers.get("x-edge-degraded")).toBeNull();
    expect(res.json<ReceivedRequest>().url).toBe("/live/v0.m3u8?token=abc&x=1");
  });

  it("strips the parameter in every spelling an origin could read as it", async () => {
    const res = await worker.dispatch(
      "/v.m3u8?EDGE_PATHWAY=par-1&edge%5Fpathway=ams-1&edge_pathway&keep=edge_pathway",
      { country: "DE" },
    );
    expect(res.headers.get("x-edge-pool")).toBe("par-1");
    expect(res.json<ReceivedRequest>().url).toBe("/v.m3u8?keep=edge_pathway");
    const only = await worker.dispatch("/v.m3u8?edge_pathway=ams-1#frag", { country: "DE" });
    expect(only.json<ReceivedRequest>().url).toBe("/v.m3u8");
  });

  it("refuses a pool outside the viewer's fence, routing as without it", async () => {
    const res = await worker.dispatch("/seg.ts?edge_pathway=use-1", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-degraded")).toBe("pathway-refused");
    expect(res.headers.get("x-edge-fence")).toBe("eu");
    expect(origins.get("use-1").hits).toBe(0);
    expect(res.json<ReceivedRequest>().url).toBe("/seg.ts");
  });

  it("refuses an unhealthy pool, a pool the map does not know and a name that is no pool", async () => {
    await putSteerWorld(worker, origins, { "health/ams-1": { status: "unhealthy" } });
    for (const asked of ["ams-1", "nyc-9", "..%2Fadmin", ""]) {
      const res = await worker.dispatch(`/seg.ts?edge_pathway=${asked}`, { country: "DE" });
      expect(res.headers.get("x-edge-pool"), asked).toBe("fra-1");
      expect(res.headers.get("x-edge-degraded"), asked).toBe("pathway-refused");
    }
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("refuses a pool the isolate has ejected", async () => {
    // The last test: ams-1 stays dead.
    await origins.get("ams-1").kill();
    // EDGE_EJECT_AFTER=1: one refused connection ejects ams-1's origin.
    const first = await worker.dispatch("/a.ts?edge_pathway=ams-1", { country: "DE" });
    expect(first.headers.get("x-edge-failover")).toBe("ams-1>fra-1");
    const res = await worker.dispatch("/b.ts?edge_pathway=ams-1", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-degraded")).toBe("pathway-refused");
    expect(res.headers.get("x-edge-failover")).toBeNull();
  });
});
