import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ReadableStream } from "node:stream/web";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import {
  type Blackhole,
  type Origins,
  type ReceivedRequest,
  startBlackhole,
  startOrigins,
} from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

const TIMEOUT_MS = 600;
const ONCE_TIMEOUT_MS = 1500;

/** What the upload origin answers: what it received, counted and hashed. */
interface Received {
  readonly method: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly contentLength: string | null;
  readonly chunked: boolean;
}

/**
 * An origin that reads the whole request body and answers with its byte count and hash; an
 * upload to `/too-big` it refuses at once with a 413, then reads and drops the rest, as nginx's
 * lingering close does: a server that closes with upload bytes unread makes its kernel reset the
 * connection, which can discard the 413 before the edge has read it.
 */
async function startUploadSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith("/too-big")) {
      // Without `connection: close`, Node reads and drops the unread body after the answer.
      res.writeHead(413, { "content-type": "text/plain" });
      res.end("too big");
      return;
    }
    const hash = createHash("sha256");
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      hash.update(chunk);
    });
    req.on("end", () => {
      const received: Received = {
        method: req.method ?? "",
        bytes,
        sha256: hash.digest("hex"),
        contentLength: req.headers["content-length"] ?? null,
        chunked: req.headers["transfer-encoding"] === "chunked",
      };
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(received));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** `data` as a stream of `chunks` pieces, one every `spanMs / chunks` ms. */
function slowStream(data: Buffer, chunks: number, spanMs: number): ReadableStream<Uint8Array> {
  const size = Math.ceil(data.length / chunks);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= data.length) {
        controller.close();
        return;
      }
      if (at > 0) await sleep(spanMs / chunks);
      controller.enqueue(new Uint8Array(data.subarray(at, at + size)));
      at += size;
    },
  });
}

/** An origin that sends its headers at once and its body slowly, over `bodyMs`. */
async function startSlowBody(bodyMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("first,");
    setTimeout(() => res.end("last"), bodyMs);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe(`origin timeouts (ORIGIN_TIMEOUT_MS=${TIMEOUT_MS}, ORIGIN_ONCE_TIMEOUT_MS=${ONCE_TIMEOUT_MS})`, () => {
  let origins: Origins;
  let hole: Blackhole;
  let hole2: Blackhole;
  let slow: { url: string; close(): Promise<void> };
  let sink: { url: string; close(): Promise<void> };
  let worker: TestWorker;
  const rev = 1;
  const urls = (): Record<string, string> => ({
    ...Object.fromEntries(origins.all.map((o) => [o.name, o.url])),
    "hole-1": hole.url,
    "hole-2": hole2.url,
    "slow-1": slow.url,
    "sink-1": sink.url,
  });
  const BASE_MAP: MapSpec = {
    default: { chain: ["hole-1", "ams-1"], source: "country/_default" },
    countries: {
      NL: { chain: ["hole-1", "hole-2"], source: "country/NL" },
      BE: { chain: ["hole-1", "dead-1"], source: "country/BE" },
      FR: { chain: ["fra-1", "ams-1"], source: "country/FR" },
      SE: { chain: ["slow-1", "ams-1"], source: "country/SE" },
      PL: { chain: ["sink-1", "ams-1"], source: "country/PL" },
    },
  };

  beforeAll(async () => {
    [origins, hole, hole2, slow, sink] = await Promise.all([
      startOrigins(["fra-1", "ams-1", "dead-1"]),
      startBlackhole(),
      startBlackhole(),
      startSlowBody(TIMEOUT_MS * 2),
      startUploadSink(),
    ]);
    await origins.get("dead-1").kill();
    // Each request here must meet the black holes: outlier ejection is off (outlier-ejection.test.ts).
    worker = await startWorker({
      ORIGIN_TIMEOUT_MS: String(TIMEOUT_MS),
      ORIGIN_ONCE_TIMEOUT_MS: String(ONCE_TIMEOUT_MS),
      MAX_ATTEMPTS: "2",
      EDGE_EJECT_AFTER: "0",
    });
    const all = urls();
    await worker.putMap(serializeMap(buildMap(BASE_MAP, { rev, originOf: (p) => all[p] ?? "" })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([
      origins?.close(),
      hole?.close(),
      hole2?.close(),
      slow?.close(),
      sink?.close(),
    ]);
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it("moves a GET on from an origin that accepts and never answers", async () => {
    const res = await worker.dispatch("/seg-1.ts?q=1", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>()).toMatchObject({ origin: "ams-1", url: "/seg-1.ts?q=1" });
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.headers.get("x-edge-failover")).toBe("hole-1>ams-1");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
    // It waited for the timeout, and not for the platform to give up.
    expect(res.elapsedMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(res.elapsedMs).toBeLessThan(TIMEOUT_MS + 5_000);
  });

  it("fails HEAD over the same way", async () => {
    const res = await worker.dispatch("/", { country: "DE", method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(origins.get("ams-1").requests[0]?.method).toBe("HEAD");
  });

  it("answers 504 when every attempt timed out, with the failover and its reason", async () => {
    const res = await worker.dispatch("/", { country: "NL" });
    expect(res.status).toBe(504);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(res.headers.get("x-edge-failover")).toBe("hole-1>hole-2");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
    expect(res.headers.get("x-edge-pool")).toBe("hole-2");
    expect(res.body).not.toContain("127.0.0.1");
  });

  it("answers 502 when one attempt timed out and the other found nothing listening", async () => {
    const res = await worker.dispatch("/", { country: "BE" });
    expect(res.status).toBe(502);
    expect(res.headers.get("x-edge-failover")).toBe("hole-1>dead-1");
  });

  it("never retries a POST: a silent origin gets ORIGIN_ONCE_TIMEOUT_MS, then a 504", async () => {
    const before = hole.accepted;
    const res = await worker.dispatch("/api", { country: "DE", method: "POST", body: "x" });
    expect(res.status).toBe(504);
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("ams-1").hits).toBe(0);
    expect(hole.accepted).toBe(before + 1);
    expect(res.elapsedMs).toBeGreaterThanOrEqual(ONCE_TIMEOUT_MS - 5);
    expect(res.elapsedMs).toBeLessThan(ONCE_TIMEOUT_MS + 5_000);
  });

  it("keeps a POST whose answer comes after ORIGIN_TIMEOUT_MS: the origin may be committing it", async () => {
    origins
      .get("fra-1")
      .respond((r) =>
        r.method === "POST" ? { status: 201, body: `stored ${r.body}`, delayMs: 1000 } : undefined,
      );
    const res = await worker.dispatch("/api", { country: "FR", method: "POST", body: "order-1" });
    expect(res.status).toBe(201);
    expect(res.body).toBe("stored order-1");
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("fra-1").hits).toBe(1);
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("times a POST from the end of its body: a slow upload to a silent origin", async () => {
    const started = performance.now();
    const res = await worker.mf.dispatchFetch("http://edge.test/upload", {
      method: "POST",
      body: slowStream(Buffer.alloc(64 * 1024, 7), 8, 2_000),
      duplex: "half",
      cf: { country: "DE" },
    });
    await res.text();
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    expect(elapsed).toBeGreaterThanOrEqual(2_000 + ONCE_TIMEOUT_MS - 300);
  });

  it("streams an upload of unknown length chunked, whole, however long it takes", async () => {
    const data = randomBytes(1024 * 1024);
    const res = await worker.mf.dispatchFetch("http://edge.test/upload?id=2", {
      method: "POST",
      body: slowStream(data, 8, 2_000),
      duplex: "half",
      cf: { country: "PL" },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({
      method: "POST",
      bytes: data.length,
      sha256: createHash("sha256").update(data).digest("hex"),
      contentLength: null,
      chunked: true,
    });
  });

  it("passes on an origin's early refusal of an upload while the body still streams", async () => {
    // workerd closes the client's connection with upload bytes still unread once the answer is
    // sent, and TCP may then reset it before the test client has read that answer: a race of the
    // test client's socket, not of the Worker. Such a reset is retried; any other failure is not.
    for (let attempt = 1; ; attempt++) {
      const started = performance.now();
      try {
        const res = await worker.mf.dispatchFetch("http://edge.test/too-big", {
          method: "POST",
          headers: { "content-length": String(1024 * 1024) },
          body: slowStream(Buffer.alloc(1024 * 1024, 1), 16, 6_000),
          duplex: "half",
          cf: { country: "PL" },
        });
        const text = await res.text();
        expect(res.status).toBe(413);
        expect(text).toBe("too big");
        expect(res.headers.get("x-edge-pool")).toBe("sink-1");
        // Answered on the origin's word, not after the 6 s upload nor a timeout.
        expect(performance.now() - started).toBeLessThan(5_000);
        return;
      } catch (e) {
        const cause = (e as { cause?: { code?: string } }).cause;
        if (attempt >= 5 || cause?.code !== "UND_ERR_SOCKET") throw e;
      }
    }
  });

  it("streams a 6 MB upload sent over 8 s to the origin whole", async () => {
    const data = randomBytes(6 * 1024 * 1024);
    const started = performance.now();
    const res = await worker.mf.dispatchFetch("http://edge.test/upload?id=1", {
      method: "PUT",
      headers: { "content-length": String(data.length), "content-type": "video/mp4" },
      body: slowStream(data, 48, 8_000),
      duplex: "half",
      cf: { country: "PL" },
    });
    const text = await res.text();
    const elapsed = performance.now() - started;
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("sink-1");
    expect(JSON.parse(text)).toEqual({
      method: "PUT",
      bytes: data.length,
      sha256: createHash("sha256").update(data).digest("hex"),
      contentLength: String(data.length),
      chunked: false,
    });
    expect(elapsed).toBeGreaterThanOrEqual(7_500);
  }, 30_000);

  it("closes the connections of attempts that timed out", async () => {
    await worker.dispatch("/", { country: "NL" });
    expect(hole.accepted).toBeGreaterThan(0);
    const deadline = Date.now() + 10_000;
    while ((hole.open > 0 || hole2.open > 0) && Date.now() < deadline) await sleep(50);
    expect({ open: hole.open + hole2.open }).toEqual({ open: 0 });
  });

  it("stops the clock at the response headers: a body slower than the timeout arrives whole", async () => {
    const res = await worker.dispatch("/", { country: "SE" });
    expect(res.status).toBe(200);
    expect(res.body).toBe("first,last");
    expect(res.headers.get("x-edge-pool")).toBe("slow-1");
    expect(res.headers.get("x-edge-failover")).toBeNull();
  });

  it("keeps an origin whose headers come in time, however close", async () => {
    origins.get("fra-1").respond(() => ({ status: 200, body: "late but fine", delayMs: 200 }));
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.body).toBe("late but fine");
    expect(res.headers.get("x-edge-failover")).toBeNull();
  });

  it.each([520, 521, 522, 523, 524, 525, 526])("moves on from a Cloudflare %i", async (status) => {
    origins.get("fra-1").failWith(status);
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(res.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
  });

  it.each([519, 527, 530])("does not retry a %i", async (status) => {
    origins.get("fra-1").failWith(status);
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.status).toBe(status);
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("ams-1").hits).toBe(0);
  });
});

describe("ORIGIN_TIMEOUT_MS=4000 by default, MAX_ATTEMPTS=1", () => {
  let hole: Blackhole;
  let worker: TestWorker;

  beforeAll(async () => {
    hole = await startBlackhole();
    worker = await startWorker({ MAX_ATTEMPTS: "1" });
    const spec: MapSpec = { default: { chain: ["hole-1"], source: "country/_default" } };
    await worker.putMap(serializeMap(buildMap(spec, { rev: 1, originOf: () => hole.url })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await hole?.close();
  });

  it("gives a lone silent origin 4 s, then answers 504", async () => {
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.status).toBe(504);
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(res.elapsedMs).toBeGreaterThanOrEqual(3_990);
    expect(res.elapsedMs).toBeLessThan(15_000);
  });
});
