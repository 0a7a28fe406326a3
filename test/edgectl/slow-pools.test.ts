import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import { readPrefix } from "../../adapters/prefix-read.js";
import {
  type CompiledMap,
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

// docs/reference.md §9 as the operator sees it in edgectl: plan, apply, export, explain, status.

let etcd: EtcdServer;
let client: Etcd3;
const files = tempFiles();
const persist = mkdtempSync(join(tmpdir(), "edgectl-slow-"));
const NS = "edgectl-slow-test";

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
async function push(prefix: string, previous: CompiledMap | null = null): Promise<CompiledMap> {
  const { map } = compile(toSnapshot(await readPrefix(client, prefix)), {
    prefix,
    floorPool: DEFAULT_FLOOR_POOL,
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
    now: new Date(),
    carried: previous,
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
  return map;
}

const slowState = () => {
  const s = exampleState();
  return {
    ...s,
    pools: {
      ...s.pools,
      "fra-1": { ...s.pools["fra-1"], quorum: 2, slow_ms: { low: 800, high: 2000 } },
    },
  };
};

const checkers = async (prefix: string, pool: string, p90: number) => {
  for (const c of ["a", "b", "c"])
    await client
      .put(`${prefix}health/${pool}/${c}`)
      .value(JSON.stringify({ status: "healthy", p90_ms: p90, samples: 20 }));
};

describe("edgectl and slow pools", () => {
  it("plan and apply take quorum and slow_ms; export gives them back; plan shows the shed", async () => {
    const prefix = uniquePrefix("slow");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    await checkers(prefix, "fra-1", 1400);
    for (const p of ["ams-1", "par-1"]) await checkers(prefix, p, 200);

    const file = files.write(slowState());
    const plan = await runCli(["plan", file], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      '~ pool/fra-1  {"origin":"https://fra-1.origin.example.com","region":"eu-central"} → {"origin":"https://fra-1.origin.example.com","region":"eu-central","quorum":2,"slow_ms":{"low":800,"high":2000}}',
    );
    expect(plan.stdout).toContain(
      "DE: fra-1 100% → fra-1 50% · ams-1 50% (country/DE, shed fra-1:50)",
    );
    expect(plan.stdout).toContain("fra-1: p90 1400 ms, watermarks 800/2000 ms, sheds 50 %");
    const json = await runCli(["plan", file, "-o", "json"], { env });
    const doc = JSON.parse(json.stdout) as PlanResult;
    expect(doc.effect.find((s) => s.country === "DE")?.after.shed).toEqual([
      { pool: "fra-1", share: 50 },
    ]);
    expect(doc.shedding).toEqual([
      expect.objectContaining({
        pool: "fra-1",
        p90_ms: 1400,
        shed: 50,
        quorum: 2,
        live_checkers: 3,
      }),
    ]);

    expect((await runCli(["apply", file, "--yes"], { env })).code).toBe(0);
    const exported = await runCli(["export", "-o", "json"], { env });
    const state = (JSON.parse(exported.stdout) as { state: { pools: Record<string, unknown> } })
      .state;
    expect(state.pools["fra-1"]).toEqual(slowState().pools["fra-1"]);
    // the export, applied, changes nothing
    const text = await runCli(["export"], { env });
    const again = await runCli(["plan", files.write(text.stdout.split("\n").slice(1).join("\n"))], {
      env,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("No changes: etcd already holds this intent.");
  });

  it("explain says the p90, the watermarks, the share and where the viewers went; status lists the pool", async () => {
    const prefix = uniquePrefix("slowx");
    const env = envFor(prefix);
    expect((await runCli(["apply", files.write(slowState()), "--yes"], { env })).code).toBe(0);
    await checkers(prefix, "fra-1", 1400);
    for (const p of ["ams-1", "par-1"]) await checkers(prefix, p, 200);
    await push(prefix);

    const text = await runCli(["explain", "DE"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      "fra-1        healthy    takes traffic  (3/3 checkers healthy, p90 1400 ms, slow 800/2000 ms, sheds 50 %)",
    );
    expect(text.stdout).toContain("shed:   fra-1 50%");
    expect(text.stdout).toContain(
      "fra-1 is slow: p90 1400 ms (median of 3 healthy checkers), watermarks 800/2000 ms: sheds 50 % of its viewers to ams-1 (the next pools of the chain); split now fra-1 50% · ams-1 50% (each viewer sticky)",
    );
    const json = JSON.parse(
      (await runCli(["explain", "DE", "-o", "json"], { env })).stdout,
    ) as ExplainResult;
    expect(json.kind === "country" && json.route.shed).toEqual([{ pool: "fra-1", share: 50 }]);
    expect(json.kind === "country" && json.chain[0]?.report).toEqual({
      pool: "fra-1",
      status: "healthy",
      p90_ms: 1400,
      live_checkers: 3,
      healthy_checkers: 3,
      quorum: 2,
      slow_ms: { low: 800, high: 2000 },
      shed: 50,
    });
    expect(json.split).toEqual([
      { pool: "fra-1", percent: 50 },
      { pool: "ams-1", percent: 50 },
    ]);

    const status = await runCli(["status", "--no-pusher"], { env });
    expect(status.stdout).toContain(
      "shedding pools:\n  fra-1: p90 1400 ms, watermarks 800/2000 ms, sheds 50 %",
    );
    const sj = JSON.parse(
      (await runCli(["status", "--no-pusher", "-o", "json"], { env })).stdout,
    ) as StatusResult;
    expect(sj.shedding.map((r) => [r.pool, r.shed])).toEqual([["fra-1", 50]]);

    // The p90 recovers: explain and status show the share KV still holds, stepping down.
    await checkers(prefix, "fra-1", 300);
    const held = JSON.parse(
      (await runCli(["explain", "DE", "-o", "json"], { env })).stdout,
    ) as ExplainResult;
    expect(held.kind === "country" && held.route.shed).toEqual([{ pool: "fra-1", share: 50 }]);
  });

  it("every pool slow: explain says all-pools-slow and why", async () => {
    const prefix = uniquePrefix("allslow");
    const env = envFor(prefix);
    const s = slowState();
    const slow = { slow_ms: { low: 800, high: 2000 } };
    const all = {
      ...s,
      pools: {
        "fra-1": s.pools["fra-1"],
        "ams-1": { ...s.pools["ams-1"], ...slow },
        "par-1": { ...s.pools["par-1"], ...slow },
      },
    };
    expect((await runCli(["apply", files.write(all), "--yes"], { env })).code).toBe(0);
    for (const p of ["fra-1", "ams-1", "par-1"]) await checkers(prefix, p, 2500);
    const text = await runCli(["explain", "DE", "--no-kv"], { env });
    expect(text.stdout).toContain("degraded: all-pools-slow");
    expect(text.stdout).toContain("every pool of the chain is fully shed (fra-1 p90 2500 ms");
    expect(text.stdout).not.toContain("shed:   ");
  });
});
