import { afterEach, describe, expect, it } from "vitest";
import { type KvStandin, type KvStandinOptions, startKvStandin } from "../../testkit/kv-standin.js";

const TOKEN = "standin-test-token-0123456789";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function standin(opts: KvStandinOptions = {}): Promise<KvStandin> {
  const s = await startKvStandin({ token: TOKEN, ...opts });
  cleanups.push(() => s.close());
  return s;
}

/** A clock the test moves by hand. */
function manualClock(start = 1_700_000_000_000): { now: () => number; t: number } {
  const c = { t: start, now: () => c.t };
  return c;
}

const ns = (s: KvStandin) =>
  `${s.url}/accounts/${s.accountId}/storage/kv/namespaces/${s.namespaceId}`;

async function put(s: KvStandin, key: string, value: string, token = TOKEN): Promise<Response> {
  return fetch(`${ns(s)}/bulk`, {
    method: "PUT",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify([{ key, value }]),
  });
}

/** One read: the value, or `null` for Cloudflare's 404 `10009 key not found`. */
async function read(s: KvStandin, key: string, token = TOKEN): Promise<string | null> {
  const res = await fetch(`${ns(s)}/values/${encodeURIComponent(key)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (res.status === 404) {
    const body = (await res.json()) as { errors: { code: number }[] };
    expect(body.errors[0]?.code).toBe(10009);
    return null;
  }
  expect(res.status).toBe(200);
  return res.text();
}

async function reads(s: KvStandin, key: string, n: number): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let i = 0; i < n; i++) out.push(await read(s, key));
  return out;
}

describe("KV stand-in: consistency", () => {
  it("reads are consistent by default: every read sees the last write", async () => {
    const s = await standin({ perKeyWriteLimit: "off" });
    for (const v of ["v1", "v2", "v3"]) expect((await put(s, "routes", v)).status).toBe(200);
    expect(new Set(await reads(s, "routes", 50))).toEqual(new Set(["v3"]));
    expect(s.requests.some((r) => r.stale)).toBe(false);
  });

  it("with stale reads, a read returns any value of the last N seconds, or absent for a new key", async () => {
    const clock = manualClock();
    const t0 = clock.t;
    const s = await standin({
      now: clock.now,
      seed: 11,
      staleReads: { windowMs: 10_000, ratio: 0.7 },
    });
    for (const [i, v] of ["v1", "v2", "v3"].entries()) {
      clock.t = t0 + i * 1_000;
      await put(s, "routes", v);
    }
    clock.t = t0 + 3_000;
    const early = new Set(await reads(s, "routes", 200));
    // The key did not exist 10 s ago: "not found" is among the answers, as on real KV.
    expect(early).toEqual(new Set([null, "v1", "v2", "v3"]));
    expect(s.values.get("routes")).toBe("v3"); // the truth is unaffected
    clock.t = t0 + 11_500; // v1 was replaced by v2 at t0 + 1 s, before the window's start
    expect(new Set(await reads(s, "routes", 100))).toEqual(new Set(["v2", "v3"]));
    clock.t = t0 + 12_000; // exactly N seconds after the last write
    expect(new Set(await reads(s, "routes", 100))).toEqual(new Set(["v3"]));
    expect(s.requests.filter((r) => r.stale).length).toBeGreaterThan(100);
  });

  it("records writes made through `values` too (a test tampering with the truth)", async () => {
    const clock = manualClock();
    const s = await standin({ now: clock.now, staleReads: { windowMs: 5_000, ratio: 1 } });
    s.values.set("routes", "old");
    clock.t += 6_000;
    s.values.set("routes", "new");
    clock.t += 1_000;
    // ratio 1: every read that can be stale is.
    expect(new Set(await reads(s, "routes", 60))).toEqual(new Set(["old"]));
    s.values.delete("routes");
    expect(new Set(await reads(s, "routes", 60))).toEqual(new Set(["old", "new"]));
    clock.t += 6_000;
    expect(new Set(await reads(s, "routes", 20))).toEqual(new Set([null]));
  });

  it("is reproducible: the same seed gives the same answers, and staleness leaves faults alone", async () => {
    async function run(seed: number, stale: boolean): Promise<string[]> {
      const clock = manualClock();
      const s = await standin({
        now: clock.now,
        seed,
        perKeyWriteLimit: "off",
        faults: { ratio: 0.3, weights: { "server-error": 1 } },
        ...(stale ? { staleReads: { windowMs: 60_000 } } : {}),
      });
      const out: string[] = [];
      for (let i = 0; i < 40; i++) {
        clock.t += 500;
        if (i % 4 === 0) await put(s, "k", `v${i}`);
        else {
          const res = await fetch(`${ns(s)}/values/k`, {
            headers: { authorization: `Bearer ${TOKEN}` },
          });
          out.push(`${res.status}:${res.status === 200 ? await res.text() : ""}`);
        }
      }
      out.push(`faults ${s.requests.map((r) => (r.fault ? "F" : ".")).join("")}`);
      return out;
    }
    const a = await run(5, true);
    expect(await run(5, true)).toEqual(a);
    expect(await run(6, true)).not.toEqual(a);
    // The fault pattern does not depend on whether reads are stale.
    expect((await run(5, false)).at(-1)).toBe(a.at(-1));
  });
});

describe("KV stand-in: one budget per user", () => {
  it("counts every token of the user against one budget, and blocks them all once spent", async () => {
    const clock = manualClock();
    const edgectl = "edgectl-token-abcdef0123";
    const s = await standin({
      now: clock.now,
      tokens: [edgectl],
      accountLimit: { limit: 4, windowMs: 60_000 },
    });
    expect(await read(s, "a")).toBeNull();
    expect(await read(s, "b", edgectl)).toBeNull();
    expect((await put(s, "c", "v")).status).toBe(200);
    expect(await read(s, "c", edgectl)).toBe("v");
    for (const token of [TOKEN, edgectl]) {
      const res = await fetch(`${ns(s)}/values/c`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(429);
      expect(res.headers.get("retry-after")).toBe("60");
      expect(await res.json()).toMatchObject({ success: false, errors: [{ code: 971 }] });
    }
    expect(Object.fromEntries(s.budget.byToken)).toEqual({ [TOKEN]: 2, [edgectl]: 2 });
    clock.t += 60_000;
    expect(await read(s, "c", edgectl)).toBe("v");
  });
});

describe("KV stand-in: Cloudflare's error shapes", () => {
  const get = (s: KvStandin, headers: Record<string, string>) =>
    fetch(`${ns(s)}/values/routes`, { headers });

  it("answers credential problems with the documented codes, counting none of them", async () => {
    const s = await standin();
    const none = await get(s, {});
    expect(none.status).toBe(400);
    expect(await none.json()).toEqual({
      success: false,
      errors: [
        { code: 9106, message: "Missing X-Auth-Key, X-Auth-Email or Authorization headers" },
      ],
      messages: [],
      result: null,
    });
    for (const header of ["Basic dXNlcjpwdw==", `Bearer ${TOKEN} extra`, "Bearer"]) {
      const bad = await get(s, { authorization: header });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({
        success: false,
        errors: [
          {
            code: 6003,
            message: "Invalid request headers",
            error_chain: [{ code: 6111, message: "Invalid format for Authorization header" }],
          },
        ],
      });
    }
    const wrong = await get(s, { authorization: "Bearer not-the-token" });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({
      errors: [{ code: 10000, message: "Authentication error" }],
    });
    expect(s.budget.byToken.size).toBe(0);
  });

  it("serves the edge's HTML page on an edge 5xx and a foreign HTML 404, and the envelope for a missing key", async () => {
    const s = await standin();
    s.failNext("edge-error");
    const edge = await get(s, { authorization: `Bearer ${TOKEN}` });
    expect(edge.status).toBeGreaterThanOrEqual(500);
    expect(edge.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await edge.text();
    expect(page).toContain(`<title>api.cloudflare.com | ${edge.status}: `);
    expect(page).toContain("Cloudflare Ray ID");
    s.failNext("foreign-404");
    const foreign = await get(s, { authorization: `Bearer ${TOKEN}` });
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get("content-type")).toMatch(/^text\/html/);
    const missing = await get(s, { authorization: `Bearer ${TOKEN}` });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      success: false,
      errors: [{ code: 10009, message: "get: 'key not found'" }],
      messages: [],
      result: null,
    });
  });
});
