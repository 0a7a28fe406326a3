import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { type CompiledMap, compile, type Snapshot, sameRouting } from "../core/index.js";

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
    carried: null,
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
