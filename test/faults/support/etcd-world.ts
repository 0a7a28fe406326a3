import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import {
  type CompiledMap,
  compile,
  parseMap,
  type Snapshot,
  sameRouting,
} from "../../../core/index.js";
import { type EtcdServer, startEtcd } from "../../../testkit/etcd.js";
import type { FaultContext } from "../scenario.js";

/** The pools every scenario world defines (always present, so rules never dangle). */
export const POOLS = ["fra-1", "ams-1", "par-1", "waw-1", "mad-1"] as const;

/** Countries the random writers use. */
export const COUNTRIES = [
  "DE",
  "FR",
  "GB",
  "NL",
  "BE",
  "PL",
  "ES",
  "IT",
  "PT",
  "SE",
  "NO",
  "DK",
  "FI",
  "AT",
  "CH",
  "CZ",
  "IE",
  "US",
  "CA",
  "BR",
  "JP",
  "IN",
  "AU",
  "ZA",
  "MX",
  "TR",
  "GR",
  "RO",
  "HU",
  "UA",
] as const;

/** A unique prefix and election key for one scenario. */
export function names(tag: string): { prefix: string; electionKey: string } {
  const id = Math.random().toString(36).slice(2, 8);
  return { prefix: `/faults/${tag}-${id}/routing/v1/`, electionKey: `/faults/${tag}-${id}/leader` };
}

/** Starts a real etcd, stopped with the scenario. */
export async function scenarioEtcd(
  ctx: FaultContext,
  extraArgs: string[] = [],
): Promise<EtcdServer> {
  const etcd = await startEtcd({ extraArgs });
  ctx.defer(() => etcd.stop());
  return etcd;
}

/** An etcd3 client of the test's own, closed with the scenario. */
export function testClient(
  ctx: FaultContext,
  endpoint: string,
  auth?: { username: string; password: string },
): Etcd3 {
  const client = new Etcd3({ hosts: endpoint, ...(auth ? { auth } : {}) });
  ctx.defer(() => client.close());
  return client;
}

/** The oracle's own range read of the prefix (one revision). */
export async function readSnapshot(client: Etcd3, prefix: string): Promise<Snapshot> {
  const res = await client.getAll().prefix(prefix).exec();
  return {
    revision: Number(res.header.revision),
    entries: res.kvs.map((kv) => ({ key: kv.key.toString("utf8"), value: kv.value })),
  };
}

/** `compile(range read of etcd)`, with the pusher's settings and no history. */
export async function expectedMap(client: Etcd3, prefix: string): Promise<CompiledMap> {
  return compile(await readSnapshot(client, prefix), {
    prefix,
    floorPool: "par-1",
    originTemplate: "https://{pool}.origin.example.com",
    now: new Date(),
  }).map;
}

/**
 * Same routing and same problems (`sameRouting`: rev, epoch and compiled_at may differ, since
 * `routes` is rewritten only when routing changes and `meta` carries the confirmed revision and
 * epoch, docs/reference.md §3; history too: which etcd history a map belongs to is the pushers'
 * count, which the oracle cannot know).
 */
export function matches(inKv: CompiledMap | null, expected: CompiledMap): boolean {
  return inKv !== null && sameRouting({ ...inKv, history: 0 }, { ...expected, history: 0 });
}

/** A short text for a mismatch. */
export function describeMismatch(inKv: CompiledMap | null, expected: CompiledMap): string {
  if (!inKv) return "KV has no routes";
  const diff: string[] = [];
  const ccs = new Set([...Object.keys(inKv.countries), ...Object.keys(expected.countries)]);
  for (const cc of ccs) {
    const a = inKv.countries[cc];
    const b = expected.countries[cc];
    if (JSON.stringify(a) !== JSON.stringify(b))
      diff.push(`${cc}: ${a?.pool ?? "-"}≠${b?.pool ?? "-"}`);
  }
  if (JSON.stringify(inKv.default) !== JSON.stringify(expected.default))
    diff.push("default differs");
  if (inKv.problems.join() !== expected.problems.join()) diff.push("problems differ");
  return `KV rev ${inKv.rev} vs etcd rev ${expected.rev}: ${diff.slice(0, 4).join(", ")}`;
}

/**
 * Polls until KV's `routes` matches `expected`; resolves to the ms it took, or null after
 * `timeoutMs`.
 */
export async function waitConverged(
  routes: () => CompiledMap | null,
  expected: CompiledMap,
  timeoutMs: number,
): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started <= timeoutMs) {
    if (matches(routes(), expected)) return Date.now() - started;
    await sleep(25);
  }
  return matches(routes(), expected) ? Date.now() - started : null;
}

/** Writes a valid base world: pools, healthy health keys (no lease), `_default`, a few countries. */
export async function seedWorld(client: Etcd3, prefix: string, countries = 10): Promise<void> {
  const ops = [];
  for (const pool of POOLS) {
    ops.push(
      client
        .put(`${prefix}pool/${pool}`)
        .value(JSON.stringify({ origin: `https://${pool}.example.net` })),
    );
    ops.push(client.put(`${prefix}health/${pool}`).value(JSON.stringify({ status: "healthy" })));
  }
  ops.push(
    client
      .put(`${prefix}country/_default`)
      .value(JSON.stringify({ primary: "ams-1", fallbacks: ["par-1"] })),
  );
  for (const [i, cc] of COUNTRIES.slice(0, countries).entries()) {
    ops.push(
      client.put(`${prefix}country/${cc}`).value(
        JSON.stringify({
          primary: POOLS[i % POOLS.length],
          fallbacks: [POOLS[(i + 1) % POOLS.length]],
        }),
      ),
    );
  }
  ops.push(client.put(`${prefix}epoch`).value("1"));
  await Promise.all(ops.map((o) => o.exec()));
}

/** Parses a routes text, for writes recorded by the stand-in. */
export { parseMap };
