import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
import type { Explanation } from "../../edgectl/explain/explain-country.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
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

/** edgectl's environment for one prefix, with the file's local KV. */
function kvEnv(prefix: string): Record<string, string> {
  return {
    ETCD_ENDPOINTS: etcd.endpoint,
    ROUTING_PREFIX: prefix,
    KV_SINK: "local",
    KV_LOCAL_PERSIST: persist,
    KV_NAMESPACE_ID: NS,
  };
}

/** Plays the pusher: compiles the prefix now and writes `routes` and `meta` to the local KV. */
async function push(
  prefix: string,
  previous: CompiledMap | null = null,
  compiledAt = new Date(),
): Promise<CompiledMap> {
  const read = await readPrefix(client, prefix);
  const { map } = compile(toSnapshot(read), {
    prefix,
    floorPool: DEFAULT_FLOOR_POOL,
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
    now: compiledAt,
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
  pusherDoc = { role: "leader", pushed_revision: map.rev, epoch: map.epoch };
  return map;
}

describe("edgectl status", () => {
  it("0 when KV and the pusher are on the current config; 1 when behind or unreachable", async () => {
    const prefix = uniquePrefix("status");
    const pusherUrl = `http://127.0.0.1:${(pusher.address() as AddressInfo).port}`;
    const env = kvEnv(prefix);
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
    // without --pusher, the pusher is asked where PUSHER_LISTEN says it listens
    const port = (pusher.address() as AddressInfo).port;
    const listen = await runCli(["status"], { env: { ...env, PUSHER_LISTEN: `0.0.0.0:${port}` } });
    expect(listen.code, listen.stdout).toBe(0);
    expect(listen.stdout).toMatch(/pusher \(leader\)/);
  });
});

describe("edgectl explain with last valid rules from KV", () => {
  it("shows the route the pusher keeps for an invalid rule, re-filtered by current health", async () => {
    const prefix = uniquePrefix("explain-lkg");
    const env = kvEnv(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    for (const pool of ["fra-1", "ams-1", "par-1"])
      await client.put(`${prefix}health/${pool}`).value('{"status":"healthy"}');
    const pushed = await push(prefix);
    await client.put(`${prefix}country/DE`).value("{broken");

    const kept = await runCli(["explain", "DE", "--json"], { env });
    expect(kept.code, kept.stderr).toBe(0);
    const x = JSON.parse(kept.stdout) as Explanation;
    expect(x.route).toMatchObject({ pool: "fra-1", source: "country/DE" });
    expect(x.reasons).toContain(`last valid rules from KV routes at revision ${pushed.rev}`);
    expect(x.problems.join("\n")).toContain("country/DE");
    // exactly what the pusher compiles with KV's map as the previous one
    const { map } = compile(toSnapshot(await readPrefix(client, prefix)), {
      prefix,
      floorPool: DEFAULT_FLOOR_POOL,
      originTemplate: DEFAULT_ORIGIN_TEMPLATE,
      now: new Date(),
      carried: pushed,
    });
    expect(x.route).toEqual(map.countries.DE);

    await client.put(`${prefix}health/fra-1`).value('{"status":"unhealthy"}');
    const refiltered = JSON.parse((await runCli(["explain", "DE", "--json"], { env })).stdout);
    expect(refiltered.route).toMatchObject({ pool: "ams-1", source: "country/DE" });

    const blind = await runCli(["explain", "DE", "--no-kv"], { env });
    expect(blind.code).toBe(0);
    expect(blind.stdout).toContain("KV not read (--no-kv)");
    expect(blind.stdout).toContain("DE follows _default");

    const empty = await runCli(["explain", "DE"], {
      env: { ...env, KV_NAMESPACE_ID: "edgectl-explain-empty" },
    });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain("KV holds no routes map");

    // a local store that does not exist is reported, and not created
    const nowhere = join(persist, "does-not-exist");
    const noStore = await runCli(["explain", "DE"], { env: { ...env, KV_LOCAL_PERSIST: nowhere } });
    expect(existsSync(nowhere)).toBe(false);
    // DE routes by a rule only KV's map keeps: no route is shown that the edge may not serve
    expect(noStore.code).toBe(1);
    expect(noStore.stdout).toBe("");
    expect(noStore.stderr).toContain(
      `cannot know how the edge routes DE: country/DE is invalid, and the edge routes by its last valid rule, which only KV's routes map keeps, and KV is not readable (no local KV at ${nowhere}`,
    );
    expect(noStore.stderr).not.toContain("follows _default");
    // a country that does not depend on the map is still explained
    const gb = await runCli(["explain", "GB"], { env: { ...env, KV_LOCAL_PERSIST: nowhere } });
    expect(gb.code, gb.stderr).toBe(0);
    expect(gb.stdout).toContain("chosen: ams-1");

    const token = "explain-test-token-0123456789";
    const unreachable = await runCli(["explain", "DE", "-o", "json"], {
      env: {
        ...env,
        KV_SINK: "cloudflare",
        CF_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
        KV_NAMESPACE_ID: "fedcba9876543210fedcba9876543210",
        CF_API_TOKEN: token,
        CF_API_BASE_URL: "http://127.0.0.1:1/client/v4",
      },
    });
    expect(unreachable.code).toBe(1);
    const error = (JSON.parse(unreachable.stdout) as { error: { code: string; message: string } })
      .error;
    expect(error.code).toBe("unreachable");
    expect(error.message).toMatch(/^cannot know how the edge routes DE: .* KV is not readable \(/);
    expect(unreachable.stdout + unreachable.stderr).not.toContain(token);
  });

  it("a slow pool on the route: KV decides its shed share, so unreadable KV means no route", async () => {
    const prefix = uniquePrefix("explain-slow");
    const env = kvEnv(prefix);
    const state = exampleState();
    const slow = { ...state.pools["fra-1"], slow_ms: { low: 200, high: 800 } };
    const file = files.write({ ...state, pools: { ...state.pools, "fra-1": slow } });
    expect((await runCli(["apply", file, "--yes"], { env })).code).toBe(0);
    for (const pool of ["fra-1", "ams-1", "par-1"])
      await client.put(`${prefix}health/${pool}`).value('{"status":"healthy","p90_ms":500}');
    const nowhere = join(persist, "nowhere-slow");
    const blind = { ...env, KV_LOCAL_PERSIST: nowhere };
    const de = await runCli(["explain", "DE"], { env: blind });
    expect(de.code).toBe(1);
    expect(de.stderr).toContain(
      "cannot know how the edge routes DE: pool fra-1 has slow_ms, and the share of viewers it sheds steps down from the one in KV's routes map",
    );
    // _default's route (ams-1, par-1) has no slow pool: etcd alone decides it
    const fallback = await runCli(["explain", "_default"], { env: blind });
    expect(fallback.code, fallback.stderr).toBe(0);
    expect(fallback.stdout).toContain("chosen: ams-1");
  });

  it("follows the last valid rule KV's map keeps: a pool that restarted comes back", async () => {
    const prefix = uniquePrefix("explain-heal");
    const env = kvEnv(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    for (const pool of ["fra-1", "ams-1", "par-1"])
      await client.put(`${prefix}health/${pool}`).value('{"status":"healthy"}');
    const first = await push(prefix);
    // DE breaks while fra-1's heartbeat restarts: KV's map routes DE by ams-1 and keeps the rule
    await client.put(`${prefix}country/DE`).value("{broken");
    await client.delete().key(`${prefix}health/fra-1`);
    const during = await push(prefix, first);
    expect(during.countries.DE?.pool).toBe("ams-1");
    expect(during.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });

    await client.put(`${prefix}health/fra-1`).value('{"status":"healthy"}');
    const back = JSON.parse((await runCli(["explain", "DE", "--json"], { env })).stdout);
    const x = back as Explanation;
    expect(x.route).toMatchObject({ pool: "fra-1", source: "country/DE", degraded: null });
    expect(x.rule).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    expect(x.reasons).toContain(
      "country/DE is invalid: routing by its last valid rule (kept in the map), re-filtered by current health",
    );
    expect(x.problems).toEqual(["country/DE: invalid JSON"]);

    for (const pool of ["fra-1", "ams-1", "par-1"])
      await client.put(`${prefix}health/${pool}`).value('{"status":"unhealthy"}');
    const down = await runCli(["explain", "DE"], { env });
    expect(down.stdout).toContain("rule:   country/DE primary fra-1, fallbacks [ams-1, par-1]");
    expect(down.stdout).toContain("every pool of the chain is unhealthy: floor pool par-1");
  });
});

describe("edgectl status while a change spreads", () => {
  it("says when a change KV holds may not yet be at every edge location, and not once settled", async () => {
    const prefix = uniquePrefix("status-settling");
    const env = kvEnv(prefix);
    expect((await runCli(["apply", files.write(exampleState()), "--yes"], { env })).code).toBe(0);
    const fresh = await push(prefix);
    const text = await runCli(["status", "--no-pusher"], { env });
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toContain("edge is on the current config");
    expect(text.stdout).toMatch(
      /KV's routes were written \d+ s ago: some edge locations may serve the previous map until about \S+ \(KV propagation 60 s or more, \+ KV_CACHE_TTL 30 s, \+ ISOLATE_CACHE_SECONDS 5 s\)/,
    );
    const json = await runCli(["status", "--no-pusher", "-o", "json"], { env });
    const settling = JSON.parse(json.stdout).kv.settling;
    expect(settling.written_at).toBe(fresh.compiled_at);
    expect(Date.parse(settling.settled_by) - Date.parse(fresh.compiled_at)).toBe(95_000);

    await push(prefix, null, new Date(Date.now() - 96_000));
    const settled = await runCli(["status", "--no-pusher"], { env });
    expect(settled.code).toBe(0);
    expect(settled.stdout).not.toContain("may serve the previous map");
    const settledJson = await runCli(["status", "--no-pusher", "-o", "json"], { env });
    expect(JSON.parse(settledJson.stdout).kv.settling).toBeNull();
  });
});
