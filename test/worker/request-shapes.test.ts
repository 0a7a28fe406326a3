import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { type RequestShape, sendShape } from "../../testkit/request-shapes.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

describe("request shapes that are no origin's fault, through workerd (defaults: EDGE_EJECT_AFTER=2)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let base = "";
  const SPEC: MapSpec = {
    default: { chain: ["par-1"], source: "country/_default" },
    countries: {
      DE: { chain: ["fra-1", "ams-1"], source: "country/DE" },
      GB: { chain: ["ams-1", "par-1"], source: "country/GB" },
    },
  };

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
    worker = await startWorker();
    base = (await worker.mf.ready).origin;
    await worker.putMap(
      serializeMap(buildMap(SPEC, { rev: 1, originOf: (p) => origins.get(p).url })),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  /** A plain GET from `country` answered by `pool` without failover: nothing was held against it. */
  async function expectUntouched(country: string, pool: string): Promise<void> {
    const r = await worker.dispatch("/after", { country });
    expect(r.status).toBe(200);
    expect(r.json<ReceivedRequest>().origin).toBe(pool);
    expect(r.headers.get("x-edge-failover")).toBeNull();
  }

  const bodiedReads: [string, RequestShape, string][] = [
    [
      "a GET with a body",
      { name: "get-body", method: "GET", headers: { "content-length": "1" }, body: "x" },
      "GET",
    ],
    [
      "a GET with Content-Length: 0",
      { name: "get-cl0", method: "GET", headers: { "content-length": "0" }, body: "" },
      "GET",
    ],
    [
      "an empty chunked GET",
      { name: "get-chunked", method: "GET", headers: { "transfer-encoding": "chunked" }, body: "" },
      "GET",
    ],
    [
      "a HEAD with a body",
      { name: "head-body", method: "HEAD", headers: { "content-length": "1" }, body: "x" },
      "HEAD",
    ],
    // workerd hands the Worker a POST that asks for a WebSocket upgrade as a GET (with the body).
    [
      "a POST asking for a WebSocket upgrade",
      {
        name: "post-upgrade",
        method: "POST",
        headers: { upgrade: "websocket", connection: "Upgrade", "content-length": "1" },
        body: "x",
      },
      "GET",
    ],
  ];

  it.each(bodiedReads)("%s reaches the origin without a body", async (_name, shape, method) => {
    const answer = await sendShape(base, "/seg-1.ts?q=1", shape, "DE");
    expect(answer?.status).toBe(200);
    expect(answer?.headers["x-edge-pool"]).toBe("fra-1");
    expect(answer?.headers["x-edge-failover"]).toBeUndefined();
    const got = origins.get("fra-1").requests;
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ method, url: "/seg-1.ts?q=1", body: "" });
    expect(got[0]?.headers["content-length"] ?? "0").toBe("0");
    expect(got[0]?.headers["transfer-encoding"]).toBeUndefined();
    expect(origins.get("ams-1").hits).toBe(0);
    await expectUntouched("DE", "fra-1");
  });

  it("two GETs with a body do not move the next viewer of another country off a healthy pool", async () => {
    const shape = bodiedReads[0]?.[1] as RequestShape;
    for (let i = 0; i < 2; i++) {
      const answer = await sendShape(base, "/x", shape, "DE");
      expect(answer?.status).toBe(200);
    }
    await expectUntouched("GB", "ams-1");
  });

  it.each<[string, RequestShape]>([
    [
      "a POST with a declared length",
      {
        name: "post-drop",
        method: "POST",
        headers: { "content-length": "100000" },
        body: "0123456789",
        dropMidUpload: true,
      },
    ],
    [
      "a chunked PUT",
      {
        name: "put-drop",
        method: "PUT",
        headers: { "transfer-encoding": "chunked" },
        body: "0123456789",
        dropMidUpload: true,
      },
    ],
  ])("%s whose client drops mid-upload is never held against the origin", async (_name, shape) => {
    for (let i = 0; i < 2; i++) expect(await sendShape(base, "/upload", shape, "DE")).toBeNull();
    // the Worker's attempt ends once workerd reports the client's body broken
    await sleep(500);
    await expectUntouched("DE", "fra-1");
    const post = await worker.dispatch("/upload", { country: "DE", method: "POST", body: "ok" });
    expect(post.status).toBe(200);
    expect(post.json<ReceivedRequest>()).toMatchObject({ origin: "fra-1", body: "ok" });
  });
});
