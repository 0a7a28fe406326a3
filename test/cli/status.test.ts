import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSink } from "../../src/adapters/kv/index.js";
import { readPrefix, toSnapshot } from "../../src/cli/etcd-client.js";
import {
  compile,
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  serializeMap,
  serializeMeta,
} from "../../src/core/index.js";
import { type EtcdServer, startEtcd } from "../helpers/etcd.js";
import { exampleState, runCli, tempFiles, uniquePrefix } from "./cli-harness.js";

let etcd: EtcdServer;
let client: Etcd3;
let pusher: Server;
let pusherDoc: Record<string, unknown> = {};
const files = tempFiles();
const persist = mkdtempSync(join(tmpdir(), "edgectl-kv-"));
const NS = "edgectl-status-test";

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
  pusher = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    res.end(req.url === "/status" ? JSON.stringify(pusherDoc) : "{}");
  });
  await new Promise<void>((r) => pusher.listen(0, "127.0.0.1", () => r()));
});
afterAll(async () => {
  client?.close();
  await new Promise<void>((r) => pusher.close(() => r()));
  await etcd?.stop();
  files.cleanup();
  rmSync(persist, { recursive: true, force: true });
});

/** Plays the pusher: compiles the prefix now and writes `routes` and `meta` to the local KV. */
async function push(prefix: string): Promise<number> {
  const read = await readPrefix(client, prefix);
  const { map } = compile(toSnapshot(read), {
    prefix,
    floorPool: DEFAULT_FLOOR_POOL,
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
    now: new Date(),
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
  pusherDoc = { role: "leader", pushed_revision: map.rev, epoch: map.epoch };
  return map.rev;
}

describe("edgectl status", () => {
  it("0 when KV and the pusher are on the current config; 1 when behind or unreachable", async () => {
    const prefix = uniquePrefix("status");
    const pusherUrl = `http://127.0.0.1:${(pusher.address() as AddressInfo).port}`;
    const env = {
      ETCD_ENDPOINTS: etcd.endpoint,
      ROUTING_PREFIX: prefix,
      KV_SINK: "local",
      KV_LOCAL_PERSIST: persist,
      KV_NAMESPACE_ID: NS,
    };
    const state = exampleState() as { countries: Record<string, unknown> };
    state.countries.FR = { primary: "par-1", fallbacks: [] };
    expect((await runCli(["apply", files.write(state), "--yes"], { env })).code).toBe(0);
    await client.put(`${prefix}health/par-1`).value('{"status":"healthy"}');

    const never = await runCli(["status", "--pusher", pusherUrl], { env });
    expect(never.code).toBe(1);
    expect(never.stdout).toContain("KV has no meta");

    await push(prefix);
    const ok = await runCli(["status", "--pusher", pusherUrl], { env });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain("edge is on the current config");
    expect(ok.stdout).toMatch(/pusher \(leader\)/);

    // a deletion leaves no mod revision behind: status still sees the edge is behind
    await client.delete().key(`${prefix}country/FR`);
    const deleted = await runCli(["status", "--pusher", pusherUrl], { env });
    expect(deleted.code).toBe(1);
    expect(deleted.stdout).toContain("KV routes differ from a fresh compile");

    await push(prefix);
    expect((await runCli(["status", "--pusher", pusherUrl], { env })).code).toBe(0);

    // an intent change: epoch and revision move ahead of KV
    const moved = exampleState() as { countries: Record<string, unknown> };
    moved.countries.DE = { primary: "par-1", fallbacks: [] };
    expect((await runCli(["apply", files.write(moved), "--yes"], { env })).code).toBe(0);
    const behind = await runCli(["status", "--pusher", pusherUrl], { env });
    expect(behind.code).toBe(1);
    expect(behind.stdout).toMatch(/KV meta\.epoch 1 ≠ etcd epoch 2/);
    expect(behind.stdout).toMatch(/pusher pushed revision \d+ < \d+/);

    await push(prefix);
    const unreachable = await runCli(["status", "--pusher", "http://127.0.0.1:1"], { env });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toContain("pusher unreachable");
    const kvOnly = await runCli(["status", "--no-pusher"], { env });
    expect(kvOnly.code, kvOnly.stdout).toBe(0);
  });
});
