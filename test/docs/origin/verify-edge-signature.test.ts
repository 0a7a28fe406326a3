import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap, signEdgeRequest } from "../../../core/index.js";
import { buildMap } from "../../cases/routing-cases.js";
import { freePort } from "../../helpers/ports.js";
import { startWorker, type TestWorker } from "../../helpers/worker.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const VERIFIER = resolve(ROOT, "docs/origin/verify-edge-signature.php");
const ROUTER = resolve(import.meta.dirname, "php-origin.php");

interface PhpOrigin {
  readonly url: string;
  stop(): void;
}

/** `php -S` serving the test router, which requires the documented verifier. */
async function startPhpOrigin(keys: readonly string[], now?: number): Promise<PhpOrigin> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    EDGE_VERIFY_PHP: VERIFIER,
    EDGE_KEYS: keys.join(","),
    ...(now === undefined ? {} : { EDGE_NOW: String(now) }),
  };
  const child: ChildProcess = spawn("php", ["-S", `127.0.0.1:${port}`, ROUTER], {
    env,
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`${url}/`);
      return { url, stop: () => child.kill() };
    } catch {
      await sleep(50);
    }
  }
  child.kill();
  throw new Error("php -S did not start");
}

async function edgeTo(origin: string, vars: Record<string, string>): Promise<TestWorker> {
  const worker = await startWorker(vars);
  const map = buildMap(
    { default: { chain: ["php-1"], source: "country/_default" }, countries: {} },
    { rev: 9, originOf: () => origin },
  );
  await worker.putMap(serializeMap(map));
  return worker;
}

describe("docs/origin/verify-edge-signature.php on a real php-cli origin", () => {
  const started: Array<{ stop(): void } | { dispose(): Promise<void> }> = [];
  let php: PhpOrigin;
  let phpOldKeyOnly: PhpOrigin;

  beforeAll(async () => {
    php = await startPhpOrigin(["k-current"]);
    phpOldKeyOnly = await startPhpOrigin(["k-old"]);
    started.push(php, phpOldKeyOnly);
  });
  afterAll(async () => {
    for (const s of started) "stop" in s ? s.stop() : await s.dispose();
  });

  it("accepts what the edge in workerd signed, with path, query, method and attributes", async () => {
    const edge = await edgeTo(php.url, { ORIGIN_SIGNING_KEY: "k-current" });
    started.push(edge);
    for (const [method, path] of [
      ["GET", "/v/1/seg-3.ts?q=hd&x=%20y"],
      ["POST", "/upload"],
    ] as const) {
      const res = await edge.dispatch(path, {
        method,
        country: "DE",
        ...(method === "POST" ? { body: "x" } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(200);
      expect(res.body).toBe("verified");
    }
  });

  it("refuses a wrong key, and accepts the old key while the edge rotates", async () => {
    const edge = await edgeTo(phpOldKeyOnly.url, { ORIGIN_SIGNING_KEY: "k-current" });
    const rotating = await edgeTo(phpOldKeyOnly.url, {
      ORIGIN_SIGNING_KEY: "k-new",
      ORIGIN_SIGNING_KEY_PREVIOUS: "k-old",
    });
    started.push(edge, rotating);
    expect((await edge.dispatch("/v", { country: "DE" })).status).toBe(403);
    const res = await rotating.dispatch("/v", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.body).toBe("verified");
  });

  it("refuses a request that bypassed the edge, a forged header, and an old signature", async () => {
    const headers = {
      "X-Forwarded-Host": "video.example.com",
      "X-Edge-Pool": "php-1",
      "X-Edge-Country": "DE",
      "X-Edge-Revision": "9",
      "X-Edge-Attr-Tier": "gold",
    };
    const fields = {
      method: "GET",
      host: "video.example.com",
      pathAndQuery: "/v?a=1",
      pool: "php-1",
      country: "DE",
      revision: "9",
      attrs: [["x-edge-attr-tier", "gold"]] as [string, string][],
    };
    const now = Math.floor(Date.now() / 1000);
    const good = await signEdgeRequest({ ...fields, t: now }, ["k-current"]);
    const send = (sig: string | null, over: Record<string, string> = {}) =>
      fetch(`${php.url}/v?a=1`, {
        headers: { ...headers, ...(sig === null ? {} : { "X-Edge-Signature": sig }), ...over },
      });
    // Signed by hand exactly as the edge signs: accepted, attributes included.
    expect((await send(good)).status).toBe(200);
    expect((await send(null)).status).toBe(403);
    expect((await send(good, { "X-Edge-Country": "US" })).status).toBe(403);
    expect((await send(good, { "X-Edge-Attr-Tier": "free" })).status).toBe(403);
    expect((await send(good, { "X-Edge-Attr-Extra": "1" })).status).toBe(403);
    const old = await signEdgeRequest({ ...fields, t: now - 301 }, ["k-current"]);
    expect((await send(old)).status).toBe(403);
    expect((await send("garbage")).status).toBe(403);
  });
});
