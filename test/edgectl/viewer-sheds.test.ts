import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import { readPrefix } from "../../adapters/prefix-read.js";
import {
  compile,
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  serializeMap,
  serializeMeta,
} from "../../core/index.js";
import { toSnapshot } from "../../edgectl/etcd/read-prefix.js";
import type { ExplainResult } from "../../edgectl/output/shapes/explain-shape.js";
import type { PlanResult } from "../../edgectl/output/shapes/plan-shape.js";
import type { StatusResult } from "../../edgectl/output/shapes/status-shape.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { exampleState, runCli, tempFiles, uniquePrefix } from "./cli-harness.js";

// docs/reference.md §12 "Routing acts per country" as the operator sees it in edgectl.

let etcd: EtcdServer;
let client: Etcd3;
const files = tempFiles();
const persist = mkdtempSync(join(tmpdir(), "edgectl-viewers-"));
const NS = "edgectl-viewers-test";

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
});
afterAll(async () => {
  client?.close();
  await etcd?.stop();
  files.cleanup();
  rmSync(persist, { recursive: true, force: true });
});

const envFor = (prefix: string) => ({
  ETCD_ENDPOINTS: etcd.endpoint,
  ROUTING_PREFIX: prefix,
  KV_SINK: "local",
  KV_LOCAL_PERSIST: persist,
  KV_NAMESPACE_ID: NS,
});

/** Plays the pusher: compiles the prefix now and writes `routes` and `meta` to the local KV. */
async function push(prefix: string): Promise<void> {
  const { map } = compile(toSnapshot(await readPrefix(client, prefix)), {
    prefix,
    floorPool: DEFAULT_FLOOR_POOL,
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
    now: new Date(),
    carried: null,
  });
  const sink = await createLocalSink({ persistDir: persist, namespaceId: NS });
  try {
    await sink.putMany([
      { key: "routes", value: serializeMap(map) },
      {
        key: "meta",
        value: serializeMeta({
          v: 1,
          rev: map.rev,
          epoch: map.epoch,
          heartbeat_at: new Date().toISOString(),
          pusher: "test-pusher",
          countries: Object.keys(map.countries).length,
          problems: map.problems,
        }),
      },
    ]);
  } finally {
    await sink.close();
  }
}

/** ams-1 (the default route's first pool) sheds by each country's viewers. */
const viewersState = () => {
  const s = exampleState();
  return {
    ...s,
    pools: {
      ...s.pools,
      "ams-1": { ...s.pools["ams-1"], slow_ms: { low: 800, high: 2000 }, viewers: true },
    },
  };
};

const healthy = async (prefix: string) => {
  for (const p of ["fra-1", "ams-1", "par-1"])
    await client
      .put(`${prefix}health/${p}`)
      .value(JSON.stringify({ status: "healthy", p90_ms: 150, samples: 20 }));
};

const observe = (prefix: string, cc: string, pool: string, p90: number) =>
  client
    .put(`${prefix}observed/${cc}/${pool}`)
    .value(JSON.stringify({ p90_ms: p90, samples: 200, error_ratio: 0 }));

describe("edgectl and sheds by viewers", () => {
  it("validate refuses viewers without slow_ms, naming the pool's field", async () => {
    const bad = exampleState() as { pools: Record<string, Record<string, unknown>> };
    bad.pools["ams-1"] = { origin: "https://ams-1.origin.example.com", viewers: true };
    const r = await runCli(["validate", files.write(bad)], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("pools.ams-1.viewers: needs slow_ms");
  });

  it("plan and apply take viewers; plan shows BR's shed by viewers; export gives it back", async () => {
    const prefix = uniquePrefix("viewers");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    await healthy(prefix);
    await observe(prefix, "BR", "ams-1", 1400);

    const file = files.write(viewersState());
    const plan = await runCli(["plan", file], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('"slow_ms":{"low":800,"high":2000},"viewers":true}');
    expect(plan.stdout).toContain("shed ams-1:50;by=viewers");
    const doc = JSON.parse(
      (await runCli(["plan", file, "-o", "json"], { env })).stdout,
    ) as PlanResult;
    expect(doc.effect.find((s) => s.country === "BR")?.after.shed).toEqual([
      { pool: "ams-1", share: 50, by: "viewers" },
    ]);
    expect(doc.effect.find((s) => s.country === "US")).toBeUndefined();

    expect((await runCli(["apply", file, "--yes"], { env })).code).toBe(0);
    const exported = await runCli(["export", "-o", "json"], { env });
    const state = (JSON.parse(exported.stdout) as { state: { pools: Record<string, unknown> } })
      .state;
    expect(state.pools["ams-1"]).toEqual(viewersState().pools["ams-1"]);
  });

  it("explain and status say shed by viewers and the figures; other countries keep the pool", async () => {
    const prefix = uniquePrefix("viewersx");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(viewersState()), "--yes"], { env })).code).toBe(0);
    await healthy(prefix);
    await observe(prefix, "BR", "ams-1", 1400);
    await observe(prefix, "US", "ams-1", 300);
    await push(prefix);

    const br = await runCli(["explain", "BR"], { env });
    expect(br.code, br.stderr).toBe(0);
    expect(br.stdout).toContain(
      "ams-1 is slow for this country's viewers: p90 1400 ms over 200 requests, watermarks 800/2000 ms: shed by viewers: sheds 50 % of this country's viewers of it to par-1 (the next pools of the chain); split now ams-1 50% · par-1 50% (each viewer sticky)",
    );
    const json = JSON.parse(
      (await runCli(["explain", "BR", "-o", "json"], { env })).stdout,
    ) as ExplainResult;
    expect(json.kind === "country" && json.route.shed).toEqual([
      { pool: "ams-1", share: 50, by: "viewers" },
    ]);
    const us = await runCli(["explain", "US"], { env });
    expect(us.stdout).not.toContain("shed");

    const status = await runCli(["status", "--no-pusher"], { env });
    expect(status.stdout).toContain(
      "shed by viewers:\n  BR on ams-1: viewers' p90 1400 ms over 200 requests, watermarks 800/2000 ms, shed by viewers 50 %",
    );
    const sj = JSON.parse(
      (await runCli(["status", "--no-pusher", "-o", "json"], { env })).stdout,
    ) as StatusResult;
    expect(sj.viewer_sheds).toEqual([
      {
        country: "BR",
        pool: "ams-1",
        share: 50,
        p90_ms: 1400,
        samples: 200,
        slow_ms: { low: 800, high: 2000 },
      },
    ]);
    expect(sj.shedding).toEqual([]);
  });
});
