import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap, signEdgeRequest } from "../../core/index.js";
import { freePort } from "../../testkit/ports.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";

const ROOT = resolve(import.meta.dirname, "../..");
const DOC = resolve(ROOT, "docs/origin-verification.md");
const ROUTER = resolve(import.meta.dirname, "php-origin.php");
const WORK = mkdtempSync(join(tmpdir(), "edge-php-"));
/** The doc's PHP block, exactly as an operator copies it. */
const VERIFIER = join(WORK, "verify-edge-signature.php");

function phpBlockOf(markdown: string): string {
  const block = /```php\n([\s\S]*?)```/.exec(markdown)?.[1];
  if (!block) throw new Error(`${DOC} has no php block`);
  return block;
}

/** One `wrangler secret` command of the doc's rotation steps, with the key it puts (`old`/`new`). */
interface SecretCommand {
  readonly verb: "put" | "delete";
  readonly name: string;
  readonly value?: string;
}

/** The numbered steps of "Rotating the key without downtime", each with its commands in order. */
function rotationSteps(markdown: string): { commands: SecretCommand[] }[] {
  const section = markdown.split("## Rotating the key without downtime")[1]?.split("\n## ")[0];
  if (!section) throw new Error(`${DOC} has no rotation section`);
  return section
    .split(/^\d+\. /m)
    .slice(1)
    .map((step) => ({
      commands: [
        ...step.matchAll(/`wrangler secret (put|delete) (\w+)`(?:\s+with\s+`(\w+)`)?/g),
      ].map((m) => ({
        verb: m[1] as "put" | "delete",
        name: m[2] ?? "",
        ...(m[3] !== undefined ? { value: m[3] } : {}),
      })),
    }));
}

interface PhpOrigin {
  readonly url: string;
  stop(): void;
}

/** `php -S` serving the test router, which requires the documented verifier. */
async function startPhpOrigin(keys: readonly string[]): Promise<PhpOrigin> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    EDGE_VERIFY_PHP: VERIFIER,
    EDGE_KEYS: keys.join(","),
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

/** The Worker in workerd, routing `_default` to `origin` and each country of `byCountry` to its own. */
async function edgeTo(
  origin: string,
  vars: Record<string, string>,
  byCountry: Record<string, string> = {},
): Promise<TestWorker> {
  const worker = await startWorker(vars);
  const pools = Object.keys(byCountry);
  const map = buildMap(
    {
      default: { chain: ["php-1"], source: "country/_default" },
      countries: Object.fromEntries(
        pools.map((cc) => [cc, { chain: [`php-${cc.toLowerCase()}`], source: `country/${cc}` }]),
      ),
    },
    { rev: 9, originOf: (pool) => byCountry[pool.slice(4).toUpperCase()] ?? origin },
  );
  await worker.putMap(serializeMap(map));
  return worker;
}

describe("docs/origin-verification.md's PHP verifier on a real php-cli origin", () => {
  const started: Array<{ stop(): void } | { dispose(): Promise<void> }> = [];
  let php: PhpOrigin;
  let phpOldKeyOnly: PhpOrigin;

  beforeAll(async () => {
    writeFileSync(VERIFIER, phpBlockOf(readFileSync(DOC, "utf8")));
    php = await startPhpOrigin(["k-current"]);
    phpOldKeyOnly = await startPhpOrigin(["k-old"]);
    started.push(php, phpOldKeyOnly);
  });
  afterAll(async () => {
    for (const s of started) "stop" in s ? s.stop() : await s.dispose();
    rmSync(WORK, { recursive: true, force: true });
  });

  it("accepts what the edge in workerd signed, with path, query, method and attributes", async () => {
    const edge = await edgeTo(php.url, { ORIGIN_SIGNING_KEY: "k-current" });
    started.push(edge);
    for (const [method, path] of [
      ["GET", "/v/1/seg-3.ts?q=hd&x=%20y"],
      ["HEAD", "/v/1/seg-3.ts?q=hd"],
      ["POST", "/upload?part=2"],
      ["GET", "/vidéo/über/片段.ts?titre=été"],
    ] as const) {
      const res = await edge.dispatch(path, {
        method,
        country: "DE",
        ...(method === "POST" ? { body: "x" } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(200);
      expect(res.headers.get("x-verified"), `${method} ${path}`).toBe("yes");
    }
  });

  it("rotation: old key, then both keys, then the new key; a wrong key is refused", async () => {
    const phpBoth = await startPhpOrigin(["k-new", "k-old"]);
    const phpNew = await startPhpOrigin(["k-new"]);
    started.push(phpBoth, phpNew);
    const steps = [
      { vars: { ORIGIN_SIGNING_KEY: "k-old" }, old: 200, both: 200, new: 403 },
      {
        vars: { ORIGIN_SIGNING_KEY: "k-new", ORIGIN_SIGNING_KEY_PREVIOUS: "k-old" },
        old: 200,
        both: 200,
        new: 200,
      },
      { vars: { ORIGIN_SIGNING_KEY: "k-new" }, old: 403, both: 200, new: 200 },
    ];
    for (const step of steps) {
      const edge = await edgeTo(phpOldKeyOnly.url, step.vars, {
        DE: phpOldKeyOnly.url,
        FR: phpBoth.url,
        IT: phpNew.url,
      });
      started.push(edge);
      for (const [country, expected] of [
        ["DE", step.old],
        ["FR", step.both],
        ["IT", step.new],
      ] as const) {
        const res = await edge.dispatch("/v", { country });
        expect(res.status, `${JSON.stringify(step.vars)} → ${country}`).toBe(expected);
      }
    }
  });

  it("rotation as the doc orders it: each Worker version a `wrangler secret` step deploys keeps every origin verifying", async () => {
    const steps = rotationSteps(readFileSync(DOC, "utf8"));
    // The doc's steps 2 and 4 change the Worker; step 3 moves the origins in between.
    expect(steps.map((s) => s.commands.length)).toEqual([0, 2, 0, 1]);
    const phpBoth = await startPhpOrigin(["k-new", "k-old"]);
    const phpNew = await startPhpOrigin(["k-new"]);
    started.push(phpBoth, phpNew);
    const keys: Record<string, string> = { old: "k-old", new: "k-new" };
    let secrets: Record<string, string> = { ORIGIN_SIGNING_KEY: "k-old" };
    for (const [i, step] of steps.entries()) {
      // Before step 3 the origins accept only `old`; after it, only `new`.
      const origin = i < 2 ? phpOldKeyOnly : phpNew;
      for (const c of step.commands) {
        secrets =
          c.verb === "delete"
            ? Object.fromEntries(Object.entries(secrets).filter(([k]) => k !== c.name))
            : { ...secrets, [c.name]: keys[c.value ?? ""] ?? "" };
        const edge = await edgeTo(origin.url, secrets, { FR: phpBoth.url });
        started.push(edge);
        const what = `step ${i + 1}, after \`wrangler secret ${c.verb} ${c.name}\``;
        expect((await edge.dispatch("/v", { country: "DE" })).status, what).toBe(200);
        expect((await edge.dispatch("/v", { country: "FR" })).status, what).toBe(200);
      }
    }
    expect(secrets).toEqual({ ORIGIN_SIGNING_KEY: "k-new" });
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
