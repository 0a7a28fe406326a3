import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseSignatureHeader, serializeMap, verifyEdgeSignature } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { startTcpProxy, type TcpProxy } from "../../testkit/tcp-proxy.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";

/** The request the origin received, rebuilt as a standard Request (its own Host). */
function asReceived(seen: ReceivedRequest): Request {
  return new Request(`http://${seen.headers.host}${seen.url}`, {
    method: seen.method,
    headers: Object.entries(seen.headers),
  });
}

async function startEdge(origins: Origins, vars: Record<string, string>): Promise<TestWorker> {
  const worker = await startWorker(vars);
  const map = buildMap(
    {
      default: { chain: ["ams-1"], source: "country/_default" },
      countries: { DE: { chain: ["fra-1", "ams-1"], source: "country/DE" } },
    },
    { rev: 77, originOf: (p) => origins.get(p).url },
  );
  await worker.putMap(serializeMap(map));
  return worker;
}

describe("signed origin requests (X-Edge-Signature) through workerd", () => {
  let origins: Origins;
  let signed: TestWorker;
  let rotating: TestWorker;
  let unsigned: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    [signed, rotating, unsigned] = await Promise.all([
      startEdge(origins, { ORIGIN_SIGNING_KEY: "k-current" }),
      startEdge(origins, { ORIGIN_SIGNING_KEY: "k-new", ORIGIN_SIGNING_KEY_PREVIOUS: "k-current" }),
      startEdge(origins, {}),
    ]);
  });
  afterAll(async () => {
    await Promise.all([signed, rotating, unsigned].map((w) => w?.dispose()));
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it("signs what the edge decided; a Node origin verifies it with verifyEdgeSignature", async () => {
    const res = await signed.dispatch("/v/1/seg-3.ts?q=hd", { country: "DE" });
    expect(res.status).toBe(200);
    const seen = res.json<ReceivedRequest>();
    expect(seen.headers["x-edge-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifyEdgeSignature(asReceived(seen), ["k-current"])).toBe(true);
    expect(await verifyEdgeSignature(asReceived(seen), ["another-key"])).toBe(false);
    // The signature does not travel back to the viewer.
    expect(res.headers.get("x-edge-signature")).toBeNull();
  });

  it("verifies in Node for GET, HEAD and POST, with a query string and a non-ASCII path", async () => {
    for (const [method, path] of [
      ["GET", "/v/1/seg.ts?q=hd&b=%20c"],
      ["HEAD", "/v/1/seg.ts?q=hd"],
      ["POST", "/upload?part=2"],
      ["GET", "/vidéo/über/片段.ts?titre=été"],
    ] as const) {
      origins.get("fra-1").reset();
      const res = await signed.dispatch(path, {
        method,
        country: "DE",
        ...(method === "POST" ? { body: "payload" } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(200);
      const seen = origins.get("fra-1").requests.at(-1);
      if (!seen) throw new Error(`${method} ${path}: the origin saw nothing`);
      expect(seen.method).toBe(method);
      expect(await verifyEdgeSignature(asReceived(seen), ["k-current"]), `${method} ${path}`).toBe(
        true,
      );
    }
  });

  it("drops a client's own X-Edge-Signature and X-Edge-Attr-* and signs its own", async () => {
    const res = await signed.dispatch("/p", {
      country: "DE",
      headers: { "X-Edge-Signature": `t=1,v1=${"0".repeat(64)}`, "X-Edge-Attr-Tier": "gold" },
    });
    const seen = res.json<ReceivedRequest>();
    expect(seen.headers["x-edge-attr-tier"]).toBeUndefined();
    expect(seen.headers["x-edge-signature"]).not.toContain("0".repeat(64));
    expect(await verifyEdgeSignature(asReceived(seen), ["k-current"])).toBe(true);
  });

  it("a request that reached the origin around the edge, or was altered, fails", async () => {
    const res = await signed.dispatch("/v/1", { country: "DE" });
    const seen = res.json<ReceivedRequest>();
    const forged = new Request(asReceived(seen), {
      headers: { ...seen.headers, "x-edge-country": "US" },
    });
    expect(await verifyEdgeSignature(forged, ["k-current"])).toBe(false);
    const elsewhere = new Request(`http://${seen.headers.host}/v/2`, { headers: seen.headers });
    expect(await verifyEdgeSignature(elsewhere, ["k-current"])).toBe(false);
  });

  it("during a rotation signs with both keys: origins on either key verify", async () => {
    const res = await rotating.dispatch("/v/1", { country: "DE" });
    const seen = res.json<ReceivedRequest>();
    expect(parseSignatureHeader(seen.headers["x-edge-signature"] ?? "")?.v1).toHaveLength(2);
    expect(await verifyEdgeSignature(asReceived(seen), ["k-current"])).toBe(true);
    expect(await verifyEdgeSignature(asReceived(seen), ["k-new"])).toBe(true);
  });

  it("signs each attempt for the pool it goes to: a failed-over request verifies at the fallback", async () => {
    origins.get("fra-1").respond(() => ({ status: 503 }));
    const res = await signed.dispatch("/v/1", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    const seen = res.json<ReceivedRequest>();
    expect(seen.headers["x-edge-pool"]).toBe("ams-1");
    expect(await verifyEdgeSignature(asReceived(seen), ["k-current"])).toBe(true);
  });

  it("sends no signature without ORIGIN_SIGNING_KEY", async () => {
    const res = await unsigned.dispatch("/v/1", { country: "DE" });
    expect(res.json<ReceivedRequest>().headers["x-edge-signature"]).toBeUndefined();
  });
});

describe("signed probes (X-Edge-Signature on an out-of-band HEAD) through workerd", () => {
  let origins: Origins;
  let gate: TcpProxy;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    gate = await startTcpProxy(origins.get("fra-1").port);
    worker = await startWorker({
      ORIGIN_SIGNING_KEY: "k-current",
      EDGE_EJECT_AFTER: "2",
      EDGE_EJECT_SECONDS: "60",
    });
    const urls: Record<string, string> = {
      "fra-1": gate.endpoint,
      "ams-1": origins.get("ams-1").url,
    };
    const map = buildMap(
      { default: { chain: ["fra-1", "ams-1"], source: "country/_default" }, countries: {} },
      { rev: 5, originOf: (p) => urls[p] ?? "" },
    );
    await worker.putMap(serializeMap(map));
  });
  afterAll(async () => {
    await worker?.dispose();
    await gate?.close();
    await origins?.close();
  });

  it("a probe and the attempt sent beside it each carry their own pool, signed for it", async () => {
    gate.disconnect();
    // A refusal makes fra-1 suspect: the next request probes it while ams-1 answers the viewer.
    await worker.dispatch("/first", { country: "DE" });
    gate.accept();
    origins.get("ams-1").reset();
    const res = await worker.dispatch("/seg-1.ts?q=1", { country: "DE" });
    const seen = res.json<ReceivedRequest>();
    expect(seen.origin).toBe("ams-1");
    expect(seen.headers["x-edge-pool"]).toBe("ams-1");
    expect(await verifyEdgeSignature(asReceived(seen), ["k-current"])).toBe(true);

    const fra = origins.get("fra-1");
    const deadline = Date.now() + 5_000;
    while (fra.hits === 0 && Date.now() < deadline) await sleep(10);
    const probe = fra.requests[0];
    expect(probe).toMatchObject({ method: "HEAD", url: "/seg-1.ts?q=1" });
    if (!probe) throw new Error("fra-1 saw no probe");
    expect(probe.headers["x-edge-pool"]).toBe("fra-1");
    expect(await verifyEdgeSignature(asReceived(probe), ["k-current"])).toBe(true);
  });
});
