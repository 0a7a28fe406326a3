import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

/** 1,000 bytes of a segment, each position distinct enough to catch an offset error. */
const SEGMENT = Buffer.from(
  Array.from({ length: 1000 }, (_, i) => String.fromCharCode(65 + ((i * 7) % 26))).join(""),
);

/** A real origin serving `SEGMENT` with single byte ranges (RFC 9110 §14), as video origins do. */
async function startRangeOrigin(): Promise<{
  url: string;
  ranges: (string | null)[];
  close(): Promise<void>;
}> {
  const ranges: (string | null)[] = [];
  const server: Server = createServer((req, res) => {
    const range = req.headers.range ?? null;
    ranges.push(range);
    const size = SEGMENT.length;
    const base = { "content-type": "video/mp2t", "accept-ranges": "bytes" };
    const m = range === null ? null : /^bytes=(\d*)-(\d*)$/.exec(range);
    if (!m) {
      res.writeHead(200, { ...base, "content-length": String(size) });
      res.end(SEGMENT);
      return;
    }
    const [, from = "", to = ""] = m;
    const start = from === "" ? Math.max(0, size - Number(to)) : Number(from);
    const end = from === "" || to === "" ? size - 1 : Math.min(Number(to), size - 1);
    if (start >= size || start > end) {
      res.writeHead(416, { ...base, "content-range": `bytes */${size}` });
      res.end();
      return;
    }
    res.writeHead(206, {
      ...base,
      "content-range": `bytes ${start}-${end}/${size}`,
      "content-length": String(end - start + 1),
    });
    res.end(SEGMENT.subarray(start, end + 1));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    ranges,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("Range requests through the Worker", () => {
  let origin: Awaited<ReturnType<typeof startRangeOrigin>>;
  let worker: TestWorker;

  beforeAll(async () => {
    origin = await startRangeOrigin();
    worker = await startWorker({ MAX_ATTEMPTS: "2" });
    const spec: MapSpec = {
      default: { chain: ["seg-1"], source: "country/_default" },
      // dead-1 refuses connections: the GET moves on to seg-1 with its Range intact.
      countries: { DE: { chain: ["dead-1", "seg-1"], source: "country/DE" } },
    };
    const originOf = (p: string) => (p === "dead-1" ? "http://127.0.0.1:1" : origin.url);
    await worker.putMap(serializeMap(buildMap(spec, { rev: 5, originOf })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  it.each([
    ["bytes=0-99", "bytes 0-99/1000", 0, 100],
    ["bytes=900-", "bytes 900-999/1000", 900, 1000],
    ["bytes=-10", "bytes 990-999/1000", 990, 1000],
    ["bytes=500-500", "bytes 500-500/1000", 500, 501],
  ])(
    "%s: 206 with Content-Range %s and exactly those bytes",
    async (range, contentRange, from, to) => {
      const res = await worker.dispatch("/seg-1.ts", { country: "FR", headers: { Range: range } });
      expect(res.status).toBe(206);
      expect(res.headers.get("content-range")).toBe(contentRange);
      expect(res.headers.get("content-length")).toBe(String(to - from));
      expect(res.headers.get("accept-ranges")).toBe("bytes");
      expect(res.body).toBe(SEGMENT.subarray(from, to).toString());
      expect(res.headers.get("x-edge-pool")).toBe("seg-1");
      expect(origin.ranges.at(-1)).toBe(range);
    },
  );

  it("passes an unsatisfiable range's 416 on, with the size", async () => {
    const res = await worker.dispatch("/seg-1.ts", {
      country: "FR",
      headers: { Range: "bytes=2000-3000" },
    });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe("bytes */1000");
  });

  it("keeps the Range when a GET fails over to the next pool", async () => {
    const res = await worker.dispatch("/seg-1.ts", {
      country: "DE",
      headers: { Range: "bytes=100-199" },
    });
    expect(res.status).toBe(206);
    expect(res.headers.get("x-edge-failover")).toBe("dead-1>seg-1");
    expect(res.headers.get("content-range")).toBe("bytes 100-199/1000");
    expect(res.body).toBe(SEGMENT.subarray(100, 200).toString());
  });
});
