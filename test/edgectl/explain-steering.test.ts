import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compile, STEER_TTL_RANGE_S, serializeMap } from "../../core/index.js";
import { SteeringShape } from "../../edgectl/output/shapes/steering-shape.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { opts, snap } from "../helpers/snapshot.js";
import { runCli, uniquePrefix, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();
const DEBUG = "explain-steering-debug";

/**
 * DE fenced to eu (fra-1, ams-1, par-1; use-1 outside), split 70/30 over fra-1 and par-1, ams-1
 * unhealthy; US follows `_default` (use-1 > par-1), unfenced.
 */
const KV: Record<string, unknown> = {
  "pool/fra-1": { origin: "http://127.0.0.1:9001", region: "eu-central" },
  "pool/ams-1": { origin: "http://127.0.0.1:9002", region: "eu-west" },
  "pool/par-1": { origin: "http://127.0.0.1:9003", region: "eu-west" },
  "pool/use-1": { origin: "http://127.0.0.1:9004", region: "us-east" },
  "health/fra-1": { status: "healthy" },
  "health/ams-1": { status: "unhealthy" },
  "health/par-1": { status: "healthy" },
  "health/use-1": { status: "healthy" },
  "fence/eu": { continents: ["EU"], regions: ["eu-central", "eu-west"], floor: "par-1" },
  "country/_default": { primary: "use-1", fallbacks: ["par-1"] },
  "country/DE": {
    primary: "fra-1",
    fallbacks: ["ams-1", "par-1"],
    weights: { "fra-1": 70, "par-1": 30 },
  },
  epoch: "1",
};

describe("edgectl explain CC --steering: the manifest a viewer of CC gets (docs/reference.md §15)", () => {
  let worker: TestWorker;
  let env: Record<string, string>;

  beforeAll(async () => {
    const prefix = uniquePrefix("explain-steering");
    env = suite.envFor(prefix, { FLOOR_POOL: "use-1" });
    for (const [k, v] of Object.entries(KV))
      await suite.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
    worker = await startWorker({
      FLOOR_POOL: "use-1",
      DEBUG_TOKEN: DEBUG,
      STEER_TTL_SECONDS: "17",
    });
    await worker.putMap(serializeMap(compile(snap(KV, 50), opts({ floorPool: "use-1" })).map));
  }, 120_000);
  afterAll(async () => {
    await worker?.dispose();
  });

  /** What the Worker answers a viewer of `country` whose split picks `first`. */
  async function fromWorker(format: "hls" | "dash", country: string, first: string) {
    for (let i = 0; i < 500; i++) {
      const headers = {
        "X-Edge-Debug-Token": DEBUG,
        "X-Edge-Debug-Viewer": `viewer-${i}`,
      };
      const query = format === "hls" ? `?base=${first}` : "";
      const res = await worker.dispatch(`/__edge/steer/${format}${query}`, { country, headers });
      expect(res.status).toBe(200);
      const body = res.json<Record<string, unknown>>();
      if ((body["PATHWAY-PRIORITY"] as string[])[0] === first) return body;
    }
    throw new Error(`no viewer of ${country} picked ${first}`);
  }

  it.each(["hls", "dash"] as const)(
    "%s: -o json gives each share of the split exactly what /__edge/steer answers its viewers",
    async (format) => {
      const r = await runCli(
        ["explain", "DE", "--no-kv", "--steering", format, "--steer-ttl", "17", "-o", "json"],
        { env },
      );
      expect(r.code, r.stderr).toBe(0);
      const doc = SteeringShape.parse(JSON.parse(r.stdout));
      expect(doc.shares.map((s) => [s.pool, s.weight])).toEqual([
        ["fra-1", 70],
        ["par-1", 30],
      ]);
      for (const share of doc.shares) {
        // Fenced and health-filtered: never use-1, never the unhealthy ams-1.
        expect(share.manifest["PATHWAY-PRIORITY"]).toEqual(
          share.pool === "fra-1" ? ["fra-1", "par-1"] : ["par-1", "fra-1"],
        );
        expect(share.manifest).toEqual(await fromWorker(format, "DE", share.pool));
      }
    },
    60_000,
  );

  it("text names the country, the format and each share, with the manifest", async () => {
    const r = await runCli(["explain", "US", "--no-kv", "--steering", "hls", "--steer-ttl", "17"], {
      env,
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^US at revision \d+: the hls steering manifest its viewers get/);
    expect(lines[1]).toBe("viewers picking use-1 (weight 100):");
    const manifest = JSON.parse(lines.slice(2).join("\n"));
    expect(manifest).toEqual(await fromWorker("hls", "US", "use-1"));
    const plain = await runCli(["explain", "US", "--no-kv", "--steering", "dash", "-o", "json"], {
      env,
    });
    const doc = SteeringShape.parse(JSON.parse(plain.stdout));
    expect(doc.shares[0]?.manifest.TTL).toBe(STEER_TTL_RANGE_S.fallback);
  });

  it("refuses a format other than hls or dash, and a continent, as usage errors", async () => {
    const bad = await runCli(["explain", "DE", "--steering", "smooth"], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--steering: "smooth" is not hls or dash');
    const continent = await runCli(["explain", "EU", "--steering", "hls"], { env });
    expect(continent.code).toBe(1);
    expect(continent.stderr).toContain("--steering explains a country");
  });
});
