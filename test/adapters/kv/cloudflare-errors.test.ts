import { APIError } from "cloudflare/error";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../../adapters/errors.js";
import { toKvError } from "../../../adapters/kv/cloudflare-errors.js";
import { createCloudflareSink } from "../../../adapters/kv/cloudflare-sink.js";
import { createKvSink } from "../../../adapters/kv/create-kv-sink.js";
import { kvSettingsFromEnv } from "../../../adapters/kv/kv-settings.js";
import { isRetryableKvError, KvError, type KvSink } from "../../../adapters/kv/kv-sink.js";
import { CLOUDFLARE_BUDGET, DEFAULT_API_BUDGET } from "../../../adapters/kv/request-budget.js";
import { Secret } from "../../../adapters/kv/secret.js";
import { type KvStandin, startKvStandin } from "../../../testkit/kv-standin.js";

const TOKEN = "cf-TOKEN-3b9e1f7a2d-never-shown";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function standin(): Promise<KvStandin> {
  const s = await startKvStandin({ token: TOKEN, echoAuthorizationInErrors: true });
  cleanups.push(() => s.close());
  return s;
}

function sinkFor(s: KvStandin, token = TOKEN, logger?: pino.Logger): KvSink {
  return createCloudflareSink({
    accountId: s.accountId,
    namespaceId: s.namespaceId,
    apiToken: new Secret(token),
    baseUrl: s.url,
    timeoutMs: 2_000,
    ...(logger ? { logger } : {}),
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

function logs(): { logger: pino.Logger; text: () => string } {
  const lines: string[] = [];
  return {
    logger: pino({ level: "debug" }, { write: (l: string) => void lines.push(l) }),
    text: () => lines.join(""),
  };
}

const shown = (e: KvError) => [e.message, e.stack ?? "", String(e), JSON.stringify(e)].join("\n");

describe("cloudflare sink: Cloudflare's error shapes, through the stand-in", () => {
  it("a header that is not `Bearer <token>` (6003/6111) is credentials-malformed, not retryable, token-free", async () => {
    const s = await standin();
    const badToken = `${TOKEN} with spaces`;
    const { logger, text } = logs();
    for (const op of [
      (k: KvSink) => k.get("routes"),
      (k: KvSink) => k.putMany([{ key: "routes", value: "x" }]),
    ]) {
      const e = await kvError(op(sinkFor(s, badToken, logger)));
      expect(e.code).toBe("credentials-malformed");
      expect(isRetryableKvError(e)).toBe(false);
      expect(e.message).toContain("6003");
      expect(e.message).toContain("6111 Invalid format for Authorization header");
      expect(shown(e)).not.toContain(TOKEN);
    }
    expect(text()).toContain('"code":"credentials-malformed"');
    expect(text()).not.toContain(TOKEN);
    expect(s.values.has("routes")).toBe(false);
  });

  it("a refused token (10000) is unauthorized, not retryable; a missing header (9106) is credentials-missing", async () => {
    const s = await standin();
    const e = await kvError(sinkFor(s, "cf-a-well-formed-but-wrong-token").get("routes"));
    expect(e.code).toBe("unauthorized");
    expect(isRetryableKvError(e)).toBe(false);
    expect(e.message).toContain("10000 Authentication error");
    // The SDK always sends the header; what the API answers without one, mapped as the SDK would.
    const res = await fetch(
      `${s.url}/accounts/${s.accountId}/storage/kv/namespaces/${s.namespaceId}/values/routes`,
    );
    const missing = toKvError(
      APIError.generate(res.status, await res.json(), undefined, res.headers),
      "get",
      new Secret(TOKEN),
      Date.now(),
    );
    expect(missing.code).toBe("credentials-missing");
    expect(isRetryableKvError(missing)).toBe(false);
    expect(missing.message).toContain("9106");
  });

  it("an HTML 5xx from the edge is edge-error, retryable, named by status and page title, no HTML", async () => {
    const s = await standin();
    const { logger, text } = logs();
    const sink = sinkFor(s, TOKEN, logger);
    s.failNext("edge-error", 2);
    for (const e of [
      await kvError(sink.putMany([{ key: "routes", value: "x" }])),
      await kvError(sink.get("routes")),
    ]) {
      expect(e.code).toBe("edge-error");
      expect(isRetryableKvError(e)).toBe(true);
      expect(e.message).toMatch(
        /HTTP 5\d\d from Cloudflare's edge, not the API \(text\/html "api\.cloudflare\.com \| 5\d\d: /,
      );
      expect(e.message).not.toMatch(/<|Ray ID/);
    }
    expect(text()).toContain('"code":"edge-error"');
    expect(s.values.has("routes")).toBe(false);
  });

  it("a 404 without Cloudflare's envelope is unexpected-response, not an absent key", async () => {
    const s = await standin();
    const sink = sinkFor(s);
    await sink.putMany([{ key: "routes", value: "in KV" }]);
    s.failNext("foreign-404");
    const e = await kvError(sink.get("routes"));
    expect(e.code).toBe("unexpected-response");
    expect(isRetryableKvError(e)).toBe(false);
    expect(e.message).toContain("HTTP 404 that is not a Cloudflare API answer");
    expect(e.message).toContain("CF_API_BASE_URL");
    // With the envelope, 404 10009 is an absent key, and a present key reads back.
    expect(await sink.get("missing")).toBeNull();
    expect(await sink.get("routes")).toBe("in KV");
  });
});

describe("CF_API_BUDGET: this process's share of the account budget", () => {
  const env = (s: KvStandin, extra: Record<string, string> = {}) => ({
    KV_SINK: "cloudflare",
    CF_ACCOUNT_ID: s.accountId,
    CF_API_TOKEN: TOKEN,
    CF_API_BASE_URL: s.url,
    KV_NAMESPACE_ID: s.namespaceId,
    ...extra,
  });

  it("defaults to 900 of the account's 1,200 per 5 minutes", async () => {
    const s = await standin();
    const settings = kvSettingsFromEnv(env(s), { cwd: "/nonexistent" });
    expect(settings).toMatchObject({ kind: "cloudflare", apiBudget: DEFAULT_API_BUDGET });
    expect(DEFAULT_API_BUDGET).toBe(900);
    expect(CLOUDFLARE_BUDGET).toMatchObject({ limit: 900, windowMs: 300_000 });
  });

  it("caps what the sink sends: past its share it fails rate-limited locally, sending nothing", async () => {
    const s = await standin();
    const settings = kvSettingsFromEnv(env(s, { CF_API_BUDGET: "2" }), { cwd: "/nonexistent" });
    const sink = await createKvSink(settings, {});
    cleanups.push(() => sink.close());
    expect(await sink.get("a")).toBeNull();
    expect(await sink.get("b")).toBeNull();
    const e = await kvError(sink.get("c"));
    expect(e.code).toBe("rate-limited");
    expect(e.message).toContain("local request budget of 2 per 300s");
    expect(s.requests).toHaveLength(2);
  });

  it("rejects a share that is not a whole number from 1 to 1,200, naming the variable", async () => {
    const s = await standin();
    for (const bad of ["0", "1201", "1.5", "lots", "-3"]) {
      const attempt = () =>
        kvSettingsFromEnv(env(s, { CF_API_BUDGET: bad }), { cwd: "/nonexistent" });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(/CF_API_BUDGET/);
    }
    expect(kvSettingsFromEnv(env(s, { CF_API_BUDGET: "1200" }), { cwd: "/" })).toMatchObject({
      apiBudget: 1_200,
    });
  });
});
