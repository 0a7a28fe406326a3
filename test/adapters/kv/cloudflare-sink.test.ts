import fc from "fast-check";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { chunkEntries } from "../../../adapters/kv/bulk-chunks.js";
import { createCloudflareSink } from "../../../adapters/kv/cloudflare-sink.js";
import { createKvSink } from "../../../adapters/kv/create-kv-sink.js";
import { kvSettingsFromEnv } from "../../../adapters/kv/kv-settings.js";
import { isRetryableKvError, KvError, type KvSink } from "../../../adapters/kv/kv-sink.js";
import {
  type BudgetClock,
  CLOUDFLARE_BUDGET,
  RequestBudget,
} from "../../../adapters/kv/request-budget.js";
import { parseRetryAfter } from "../../../adapters/kv/retry-after.js";
import { Secret } from "../../../adapters/kv/secret.js";
import {
  type KvStandin,
  type KvStandinOptions,
  startKvStandin,
} from "../../../testkit/kv-standin.js";
import { freePort } from "../../../testkit/ports.js";

const TOKEN = "cf-TOKEN-7d1e4b2a9c-do-not-print";
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function standin(opts: KvStandinOptions = {}): Promise<KvStandin> {
  const s = await startKvStandin({ token: TOKEN, ...opts });
  cleanups.push(() => s.close());
  return s;
}

function captureLogs(): { logger: pino.Logger; text: () => string } {
  const lines: string[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void lines.push(s) });
  return { logger, text: () => lines.join("") };
}

function sinkFor(
  s: KvStandin,
  extra: Partial<Parameters<typeof createCloudflareSink>[0]> = {},
): KvSink {
  return createCloudflareSink({
    accountId: s.accountId,
    namespaceId: s.namespaceId,
    apiToken: new Secret(TOKEN),
    baseUrl: s.url,
    timeoutMs: 2_000,
    ...extra,
  });
}

async function kvError(p: Promise<unknown>): Promise<KvError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof KvError) return e;
    throw e;
  }
  throw new Error("expected a KvError");
}

/** A clock that only moves when someone sleeps on it. */
function fakeClock(start = 1_700_000_000_000): BudgetClock & { t: number } {
  const c = {
    t: start,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

describe("cloudflare KV sink against the stand-in", () => {
  it("bulk-writes and reads through the documented endpoints (via createKvSink)", async () => {
    const s = await standin();
    const settings = kvSettingsFromEnv(
      {
        KV_SINK: "cloudflare",
        CF_ACCOUNT_ID: s.accountId,
        CF_API_TOKEN: TOKEN,
        CF_API_BASE_URL: s.url,
        KV_NAMESPACE_ID: s.namespaceId,
      },
      { cwd: "/nonexistent" },
    );
    const sink = await createKvSink(settings, {});
    cleanups.push(() => sink.close());
    expect(sink.kind).toBe("cloudflare");
    await sink.putMany([
      { key: "routes", value: '{"rev":3,"ü":"ß"}' },
      { key: "meta", value: '{"epoch":"e"}' },
    ]);
    expect(s.values.get("routes")).toBe('{"rev":3,"ü":"ß"}');
    expect(s.values.get("meta")).toBe('{"epoch":"e"}');
    expect(await sink.get("routes")).toBe('{"rev":3,"ü":"ß"}');
    expect(await sink.get("missing")).toBeNull();
    const base = `/client/v4/accounts/${s.accountId}/storage/kv/namespaces/${s.namespaceId}`;
    expect(s.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      `PUT ${base}/bulk 200`,
      `GET ${base}/values/routes 200`,
      `GET ${base}/values/missing 404`,
    ]);
  });

  it("maps a wrong token to unauthorized (not retryable) and never shows the token", async () => {
    const s = await startKvStandin({ token: "the-right-one", echoAuthorizationInErrors: true });
    cleanups.push(() => s.close());
    const { logger, text } = captureLogs();
    const sink = sinkFor(s, { logger });
    const e = await kvError(sink.putMany([{ key: "routes", value: "x" }]));
    expect(e.code).toBe("unauthorized");
    expect(isRetryableKvError(e)).toBe(false);
    expect(e.message).toContain("10000");
    expect(e.message).toContain("[redacted]"); // the stand-in echoed the header; it was scrubbed
    const g = await kvError(sink.get("routes"));
    expect(g.code).toBe("unauthorized");
    for (const out of [e.message, e.stack ?? "", g.message, String(g), JSON.stringify(g), text()]) {
      expect(out).not.toContain(TOKEN);
    }
    expect(text()).toContain("kv request failed");
  });

  it("maps 500 to server-error (retryable)", async () => {
    const s = await standin({ echoAuthorizationInErrors: true });
    const { logger, text } = captureLogs();
    s.failNext("server-error");
    const e = await kvError(sinkFor(s, { logger }).putMany([{ key: "k", value: "v" }]));
    expect(e.code).toBe("server-error");
    expect(isRetryableKvError(e)).toBe(true);
    expect(e.message).not.toContain(TOKEN);
    expect(text()).not.toContain(TOKEN);
    expect(s.values.has("k")).toBe(false);
  });

  it("maps 429 to rate-limited with Retry-After in seconds or as an HTTP-date", async () => {
    const s = await standin({ faults: { ratio: 0, retryAfterSeconds: 7 } });
    s.failNext("rate-limited");
    const e = await kvError(sinkFor(s).putMany([{ key: "k", value: "v" }]));
    expect(e.code).toBe("rate-limited");
    expect(e.retryAfterMs).toBe(7_000);
    expect(isRetryableKvError(e)).toBe(true);
    expect(e.message).toContain("971");

    s.setFaults({ ratio: 0, retryAfterSeconds: 30, retryAfterAsDate: true });
    s.failNext("rate-limited");
    const d = await kvError(sinkFor(s).get("k"));
    expect(d.code).toBe("rate-limited");
    // HTTP-dates have 1 s resolution; allow generous slack for a slow machine.
    expect(d.retryAfterMs).toBeGreaterThan(20_000);
    expect(d.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it("rejects a second write to the same key within a second (per-key limit) as rate-limited", async () => {
    const s = await standin();
    const sink = sinkFor(s);
    await sink.putMany([{ key: "routes", value: "1" }]);
    const e = await kvError(sink.putMany([{ key: "routes", value: "2" }]));
    expect(e.code).toBe("rate-limited");
    expect(e.retryAfterMs).toBe(1_000);
    expect(s.values.get("routes")).toBe("1");
  });

  it("maps a hang to timeout (retryable)", async () => {
    const s = await standin();
    s.failNext("hang");
    const started = Date.now();
    const e = await kvError(sinkFor(s, { timeoutMs: 300 }).putMany([{ key: "k", value: "v" }]));
    expect(e.code).toBe("timeout");
    expect(isRetryableKvError(e)).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(s.requests[0]?.status).toBe(0);
  });

  it("maps a refused connection to network (retryable)", async () => {
    const port = await freePort();
    const sink = createCloudflareSink({
      accountId: "a",
      namespaceId: "n",
      apiToken: new Secret(TOKEN),
      baseUrl: `http://127.0.0.1:${port}/client/v4`,
      timeoutMs: 2_000,
    });
    const e = await kvError(sink.get("routes"));
    expect(e.code).toBe("network");
    expect(isRetryableKvError(e)).toBe(true);
    expect(e.message).not.toContain(TOKEN);
    expect(e.message).toBe(`get: connection refused: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("says what stopped the connection: TLS to a plain-HTTP port, a name that does not resolve", async () => {
    const s = await standin();
    const { logger, text } = captureLogs();
    const over = (baseUrl: string) =>
      createCloudflareSink({
        accountId: "a",
        namespaceId: "n",
        apiToken: new Secret(TOKEN),
        baseUrl,
        timeoutMs: 5_000,
        logger,
      });
    const tls = await kvError(over(s.url.replace(/^http:/, "https:")).get("routes"));
    expect(tls.code).toBe("network");
    expect(tls.message).toBe(
      "get: TLS handshake failed (a plain-HTTP port?): wrong version number",
    );
    const dns = await kvError(
      over("https://no-such-host.invalid/client/v4").putMany([{ key: "k", value: "v" }]),
    );
    expect(dns.code).toBe("network");
    expect(dns.message).toMatch(
      /^bulk write: DNS lookup failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
    );
    // The log line on-call reads says the same, and never `fetch failed` alone.
    expect(text()).toContain("wrong version number");
    expect(text()).toContain("no-such-host.invalid");
    expect(text()).not.toContain("fetch failed");
  });

  it("surfaces unsuccessful_keys of a 200 bulk answer as a retryable KvError listing them", async () => {
    const s = await standin({ seed: 42 });
    s.failNext("unsuccessful-keys");
    const entries = ["a", "b", "c", "d", "e", "f"].map((key) => ({ key, value: `v-${key}` }));
    const e = await kvError(sinkFor(s).putMany(entries));
    expect(e.code).toBe("unsuccessful-keys");
    expect(isRetryableKvError(e)).toBe(true);
    expect(e.unsuccessfulKeys.length).toBeGreaterThan(0);
    for (const k of e.unsuccessfulKeys) {
      expect(s.values.has(k)).toBe(false);
      expect(e.message).toContain(k);
    }
    const written = entries.filter((x) => !e.unsuccessfulKeys.includes(x.key));
    for (const x of written) expect(s.values.get(x.key)).toBe(x.value);
  });

  it("maps 400 (an invalid key) and an unknown namespace to bad-request (not retryable)", async () => {
    const s = await standin();
    const e = await kvError(sinkFor(s).putMany([{ key: "k".repeat(600), value: "v" }]));
    expect(e.code).toBe("bad-request");
    expect(isRetryableKvError(e)).toBe(false);
    const wrongNs = createCloudflareSink({
      accountId: s.accountId,
      namespaceId: "not-this-one",
      apiToken: new Secret(TOKEN),
      baseUrl: s.url,
    });
    const g = await kvError(wrongNs.get("routes"));
    expect(g.code).toBe("bad-request");
    expect(g.message).toContain("10013");
  });

  it("splits more than 10,000 pairs into several bulk requests", async () => {
    const s = await standin();
    const entries = Array.from({ length: 10_001 }, (_, i) => ({ key: `k${i}`, value: String(i) }));
    await sinkFor(s).putMany(entries);
    expect(s.requests.filter((r) => r.path.endsWith("/bulk")).map((r) => r.status)).toEqual([
      200, 200,
    ]);
    expect(s.values.size).toBe(10_001);
    expect(s.values.get("k10000")).toBe("10000");
  });

  it("under seeded random faults, every failure is a typed retryable KvError and runs reproduce", async () => {
    async function outcomes(): Promise<string[]> {
      const s = await standin({
        seed: 7,
        perKeyWriteLimit: "off",
        faults: {
          ratio: 0.5,
          weights: { "rate-limited": 1, "server-error": 1, "unsuccessful-keys": 1 },
        },
      });
      const sink = sinkFor(s);
      const out: string[] = [];
      for (let i = 0; i < 24; i++) {
        try {
          await sink.putMany([
            { key: "routes", value: `r${i}` },
            { key: "meta", value: `m${i}` },
          ]);
          out.push("ok");
        } catch (e) {
          if (!(e instanceof KvError) || !isRetryableKvError(e)) throw e;
          out.push(e.code);
        }
      }
      expect(s.requests.map((r) => r.fault ?? "ok")).toEqual(
        out.map((o) => (o === "rate-limited" ? "rate-limited" : o)),
      );
      return out;
    }
    const first = await outcomes();
    expect(new Set(first)).toEqual(
      new Set(["ok", "rate-limited", "server-error", "unsuccessful-keys"]),
    );
    expect(await outcomes()).toEqual(first);
  });
});

describe("the stand-in itself", () => {
  it("blocks the account for the window once its request budget is spent (971 + Retry-After)", async () => {
    const clock = fakeClock();
    const s = await standin({ now: clock.now, accountLimit: { limit: 3, windowMs: 60_000 } });
    const sink = sinkFor(s, { now: clock.now });
    for (const k of ["a", "b", "c"]) expect(await sink.get(k)).toBeNull();
    const e = await kvError(sink.get("d"));
    expect(e).toMatchObject({ code: "rate-limited", retryAfterMs: 60_000 });
    expect(e.message).toContain("971");
    clock.t += 30_000;
    expect((await kvError(sink.get("e"))).retryAfterMs).toBe(30_000);
    clock.t += 30_000;
    expect(await sink.get("f")).toBeNull();
  });

  it("enforces the documented bulk limits and envelope", async () => {
    const s = await standin();
    const url = `${s.url}/accounts/${s.accountId}/storage/kv/namespaces/${s.namespaceId}/bulk`;
    const put = (body: unknown) =>
      fetch(url, {
        method: "PUT",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const tooMany = await put(
      Array.from({ length: 10_001 }, (_, i) => ({ key: `k${i}`, value: "v" })),
    );
    expect(tooMany.status).toBe(400);
    expect(await tooMany.json()).toMatchObject({ success: false, result: null, messages: [] });
    const ok = await put([
      { key: "b64", value: Buffer.from("hi").toString("base64"), base64: true },
    ]);
    expect(await ok.json()).toEqual({
      success: true,
      errors: [],
      messages: [],
      result: { successful_key_count: 1, unsuccessful_keys: [] },
    });
    expect(s.values.get("b64")).toBe("hi");
    const noAuth = await fetch(url, { method: "PUT", body: "[]" });
    expect(noAuth.status).toBe(400);
    expect(await noAuth.json()).toMatchObject({ errors: [{ code: 9106 }] });
  });
});

describe("request budget", () => {
  it("never sends more than the window allows (sink + stand-in on one fake clock)", async () => {
    const clock = fakeClock();
    const s = await standin({ now: clock.now });
    const budget = new RequestBudget({ limit: 3, windowMs: 1_000, maxWaitMs: 60_000, clock });
    const sink = sinkFor(s, { budget, now: clock.now });
    for (let i = 0; i < 10; i++) await sink.get(`k${i}`);
    const times = s.requests.map((r) => r.at);
    expect(times).toHaveLength(10);
    for (const t of times) {
      expect(times.filter((u) => u > t - 1_000 && u <= t).length).toBeLessThanOrEqual(3);
    }
    expect(clock.t - times[0]!).toBeGreaterThanOrEqual(3_000);
  });

  it("throws rate-limited with retryAfterMs instead of waiting past maxWaitMs, sending nothing", async () => {
    const clock = fakeClock();
    const s = await standin({ now: clock.now });
    const budget = new RequestBudget({ limit: 2, windowMs: 300_000, maxWaitMs: 1_000, clock });
    const sink = sinkFor(s, { budget, now: clock.now });
    await sink.get("a");
    clock.t += 10_000;
    await sink.get("b");
    const e = await kvError(sink.putMany([{ key: "c", value: "v" }]));
    expect(e.code).toBe("rate-limited");
    expect(e.retryAfterMs).toBe(290_000);
    expect(isRetryableKvError(e)).toBe(true);
    expect(s.requests).toHaveLength(2);
  });

  it("holds the sliding-window invariant for any schedule (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 10, max: 1_000 }),
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 1, maxLength: 60 }),
        async (limit, windowMs, gaps) => {
          const clock = fakeClock(0);
          const budget = new RequestBudget({ limit, windowMs, maxWaitMs: windowMs, clock });
          const granted: number[] = [];
          for (const gap of gaps) {
            clock.t += gap;
            await budget.acquire();
            granted.push(clock.t);
          }
          for (const t of granted) {
            expect(granted.filter((u) => u > t - windowMs && u <= t).length).toBeLessThanOrEqual(
              limit,
            );
          }
          expect(budget.used()).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("defaults to a share of Cloudflare's 1,200 per 5 minutes that leaves room for other tools", () => {
    const clock = fakeClock(0);
    const b = new RequestBudget({ ...CLOUDFLARE_BUDGET, clock });
    let granted = 0;
    while (b.tryAcquire() === 0) granted++;
    expect(granted).toBe(900);
    clock.t += 300_000;
    expect(b.tryAcquire()).toBe(0);
  });
});

describe("helpers", () => {
  it("parses Retry-After seconds and HTTP-dates", () => {
    const now = Date.parse("2026-04-20T10:00:00Z");
    expect(parseRetryAfter("5", now)).toBe(5_000);
    expect(parseRetryAfter("0.5", now)).toBe(500);
    expect(parseRetryAfter("Mon, 20 Apr 2026 10:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Mon, 20 Apr 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("chunks by pair count and by bytes", () => {
    const e = (n: number, size = 1) =>
      Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: "x".repeat(size) }));
    expect(chunkEntries(e(25), 10).map((c) => c.length)).toEqual([10, 10, 5]);
    const big = chunkEntries(e(10, 400), 10_000, 1_000);
    expect(big.length).toBeGreaterThan(1);
    for (const c of big) expect(Buffer.byteLength(JSON.stringify(c))).toBeLessThanOrEqual(1_000);
    expect(big.flat()).toHaveLength(10);
  });
});
