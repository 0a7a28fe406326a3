import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import {
  type CannedResponse,
  type Origins,
  type ReceivedRequest,
  startOrigins,
} from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { buildMap } from "../../cases/routing-cases.js";

const PURGE = "purge-test-token";

/** Segments fresh for 1 s; `/seg/own-window` says its own stale-if-error; `/lang` varies. */
function origin(down: { status: number | null }) {
  return (req: ReceivedRequest): CannedResponse | undefined => {
    if (down.status !== null) return { status: down.status, body: "origin failing" };
    if (req.url.startsWith("/seg/own-window")) {
      return {
        status: 200,
        headers: { "cache-control": "max-age=1, stale-if-error=0" },
        body: `segment ${req.url}`,
      };
    }
    if (req.url.startsWith("/seg/")) {
      return { status: 200, headers: { "cache-control": "max-age=1" }, body: `segment ${req.url}` };
    }
    if (req.url === "/lang") {
      return {
        status: 200,
        headers: { "cache-control": "max-age=600", vary: "Accept-Language" },
        body: `in ${req.headers["accept-language"] ?? "any"}`,
      };
    }
    return undefined;
  };
}

async function startEdge(origins: Origins, vars: Parameters<typeof startWorker>[0]) {
  const worker = await startWorker(vars);
  const map = buildMap(
    { default: { chain: ["fra-1", "ams-1"], source: "country/_default" } },
    { rev: 1, originOf: (p) => origins.get(p).url },
  );
  await worker.putMap(serializeMap(map));
  return worker;
}

describe("stale-if-error: a stale copy stands in when every pool fails, and only inside its window", () => {
  let origins: Origins;
  let worker: TestWorker;
  const down = { status: null as number | null };

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    for (const o of origins.all) o.respond(origin(down));
    worker = await startEdge(origins, { CACHE_STALE_IF_ERROR_SECONDS: "2", MAX_ATTEMPTS: "2" });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("serves STALE while the pools answer 5xx or are dead within the window, then 502", async () => {
    const first = await worker.dispatch("/seg/a.ts");
    const storedAt = performance.now();
    const own = await worker.dispatch("/seg/own-window.ts");
    expect([first.headers.get("x-edge-cache"), own.headers.get("x-edge-cache")]).toEqual([
      "MISS",
      "MISS",
    ]);
    await sleep(1100);
    down.status = 503;
    const on5xx = await worker.dispatch("/seg/a.ts");
    expect(on5xx.status).toBe(200);
    expect(on5xx.headers.get("x-edge-cache")).toBe("STALE");
    expect(on5xx.body).toBe("segment /seg/a.ts");
    // The origin's own `stale-if-error=0` wins over CACHE_STALE_IF_ERROR_SECONDS.
    const ownWindow = await worker.dispatch("/seg/own-window.ts");
    expect(ownWindow.status).toBe(503);
    expect(ownWindow.headers.get("x-edge-cache")).toBe("MISS");

    for (const o of origins.all) await o.kill();
    const dead = await worker.dispatch("/seg/a.ts");
    expect(dead.status).toBe(200);
    expect(dead.headers.get("x-edge-cache")).toBe("STALE");
    expect(dead.body).toBe("segment /seg/a.ts");

    await sleep(Math.max(0, 3200 - (performance.now() - storedAt)));
    const after = await worker.dispatch("/seg/a.ts");
    expect(after.status).toBe(502);
    expect(after.headers.get("x-edge-cache")).toBe("MISS");
  });
});

describe("Vary, CACHE=off and purge", () => {
  let origins: Origins;
  let worker: TestWorker;
  let off: TestWorker;
  const down = { status: null as number | null };
  const hits = () => origins.all.reduce((n, o) => n + o.hits, 0);

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    for (const o of origins.all) o.respond(origin(down));
    worker = await startEdge(origins, { PURGE_TOKEN: PURGE });
    off = await startEdge(origins, { CACHE: "off" });
  });
  afterAll(async () => {
    await worker?.dispose();
    await off?.dispose();
    await origins?.close();
  });

  it("honours Vary: a copy is served only to requests with the values it was kept for", async () => {
    const en = await worker.dispatch("/lang", { headers: { "Accept-Language": "en" } });
    const de = await worker.dispatch("/lang", { headers: { "Accept-Language": "de" } });
    expect(en.body).toBe("in en");
    expect(de.body).toBe("in de");
    expect(de.headers.get("x-edge-cache")).toBe("MISS");
    const deAgain = await worker.dispatch("/lang", { headers: { "Accept-Language": "de" } });
    expect(deAgain.headers.get("x-edge-cache")).toBe("HIT");
    expect(deAgain.body).toBe("in de");
  });

  it('CACHE="off" sends every request to the origins, marked BYPASS', async () => {
    const before = hits();
    for (let i = 0; i < 3; i++) {
      const res = await off.dispatch("/seg/off.ts");
      expect(res.headers.get("x-edge-cache")).toBe("BYPASS");
    }
    expect(hits() - before).toBe(3);
  });

  const purge = (body: string, token = PURGE, method = "POST") =>
    worker.dispatch("/__edge/purge", {
      method,
      headers: { Authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(method === "POST" ? { body } : {}),
    });

  it("POST /__edge/purge removes a URL's copy from this location, and the next viewer fetches it", async () => {
    await worker.dispatch("/seg/purged.ts");
    expect((await worker.dispatch("/seg/purged.ts")).headers.get("x-edge-cache")).toBe("HIT");
    const res = await purge(JSON.stringify({ urls: ["http://edge.test/seg/purged.ts"] }));
    expect(res.status).toBe(200);
    const answer = res.json<{ purged: unknown; location: unknown }>();
    expect(answer.purged).toEqual([{ url: "http://edge.test/seg/purged.ts", removed: 1 }]);
    // Where it was purged: the Cloudflare location (Miniflare's placeholder names one).
    expect(typeof answer.location).toBe("string");
    expect((await worker.dispatch("/seg/purged.ts")).headers.get("x-edge-cache")).toBe("MISS");
  });

  it("refuses a purge without the token as a 404, and a bad body with a reason", async () => {
    expect((await purge('{"urls":[]}', "wrong")).status).toBe(404);
    expect((await off.dispatch("/__edge/purge", { method: "POST", body: "{}" })).status).toBe(404);
    expect((await purge("", PURGE, "GET")).status).toBe(405);
    const notJson = await purge("urls=x");
    expect(notJson.status).toBe(400);
    expect(notJson.json<{ error: string }>().error).toBe("bad-body");
    const badUrl = await purge(JSON.stringify({ urls: ["/seg/a.ts"] }));
    expect(badUrl.status).toBe(400);
    expect(badUrl.json<{ error: string; detail: string }>()).toEqual({
      error: "bad-url",
      detail: "urls[0] is not an absolute http(s) URL",
    });
    const many = await purge(JSON.stringify({ urls: Array(101).fill("http://edge.test/a") }));
    expect(many.json<{ error: string }>().error).toBe("too-many-urls");
  });
});
