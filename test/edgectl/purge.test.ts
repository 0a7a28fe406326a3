import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { PurgeShape } from "../../edgectl/output/shapes/purge-shape.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";
import { runCli } from "./cli-harness.js";

const TOKEN = "purge-token-3e9d1b";

describe("edgectl purge against the Worker in workerd", () => {
  let origins: Origins;
  let worker: TestWorker;
  let edge: string;
  let dir: string;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1"]);
    origins.get("fra-1").respond((req) => ({
      status: 200,
      headers: { "cache-control": "max-age=600" },
      body: `segment ${req.url}`,
    }));
    worker = await startWorker({ PURGE_TOKEN: TOKEN });
    const map = buildMap(
      { default: { chain: ["fra-1"], source: "country/_default" } },
      { rev: 1, originOf: (p) => origins.get(p).url },
    );
    await worker.putMap(serializeMap(map));
    edge = (await worker.mf.ready).origin;
    dir = mkdtempSync(join(tmpdir(), "purge-test-"));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const view = async (path: string) => {
    const res = await fetch(`${edge}${path}`);
    await res.text();
    return res.headers.get("x-edge-cache");
  };

  it("removes the URLs' copies at the location, says so per URL, and the next viewer fetches them", async () => {
    await view("/seg/1.ts");
    expect(await view("/seg/1.ts")).toBe("HIT");
    const r = await runCli(["purge", `${edge}/seg/1.ts`, `${edge}/seg/never.ts`], {
      env: { PURGE_TOKEN: TOKEN },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${edge}/seg/1.ts: 1 copy removed at`);
    expect(r.stdout).toContain(`${edge}/seg/never.ts: no copy removed`);
    expect(r.stdout).toContain("The cache is per location");
    expect(r.stdout).not.toContain(TOKEN);
    expect(await view("/seg/1.ts")).toBe("MISS");
  });

  it("prints one JSON document with -o json, the token read from --token-file", async () => {
    await view("/seg/2.ts");
    const file = join(dir, "token");
    writeFileSync(file, `${TOKEN}\n`);
    const r = await runCli(["purge", `${edge}/seg/2.ts`, "--token-file", file, "-o", "json"], {
      env: {},
    });
    expect(r.code, r.stderr).toBe(0);
    const doc = PurgeShape.parse(JSON.parse(r.stdout));
    expect(doc.purged).toEqual([
      { url: `${edge}/seg/2.ts`, edge, location: expect.any(String), removed: 1 },
    ]);
  });

  it("fails with exit 1 naming the reason: no token, a wrong token, a bad URL, no edge", async () => {
    const none = await runCli(["purge", `${edge}/seg/1.ts`], { env: {} });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("PURGE_TOKEN");
    const wrong = await runCli(["purge", `${edge}/seg/1.ts`], { env: { PURGE_TOKEN: "nope" } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("answered 404");
    expect(wrong.stderr).not.toContain("nope");
    const bad = await runCli(["purge", "/seg/1.ts"], { env: { PURGE_TOKEN: TOKEN } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("URL 1: not an absolute http(s) URL");
    const gone = await runCli(["purge", "http://127.0.0.1:1/seg/1.ts", "-o", "json"], {
      env: { PURGE_TOKEN: TOKEN },
    });
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).error.code).toBe("unreachable");
  });
});
