import { describe, expect, it } from "vitest";
import { type MapMeta, parseMap } from "../../core/index.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import {
  kvConverged,
  kvRevision,
  kvRoutes,
  seedRouting,
  uniqueNames,
  useEtcd,
  waitFor,
} from "./harness.js";

const suite = useEtcd();

async function put(key: string, value: unknown): Promise<number> {
  const res = await suite.client.put(key).value(JSON.stringify(value)).exec();
  return Number(res.header.revision);
}

/** fra-1 sheds between 800 and 2000 ms; its one checker reports `p90` (DE prefers fra-1). */
async function seedSlowPool(prefix: string, p90: number): Promise<number> {
  await seedRouting(suite.client, prefix);
  await put(`${prefix}pool/fra-1`, {
    origin: "https://fra-1.example.net",
    slow_ms: { low: 800, high: 2000 },
  });
  return put(`${prefix}health/fra-1`, { status: "healthy", p90_ms: p90 });
}

const metaOf = (kv: MemoryKv) => kv.json<MapMeta>("meta");

describe("KV routes is rewritten only when routing changes (docs/reference.md §3)", () => {
  it("a p90 rewrite that moves nothing writes meta at its revision, not routes", async () => {
    const { prefix, electionKey } = uniqueNames();
    const seeded = await seedSlowPool(prefix, 300);
    const p = suite.start({ prefix, electionKey });
    const first = await kvConverged(suite.client, p.kv, prefix, seeded);
    const routesWrites = p.kv.writesOf("routes").length;

    // Below the low watermark: the map routes the same at each of these revisions.
    let rev = 0;
    for (const p90 of [420, 360, 610])
      rev = await put(`${prefix}health/fra-1`, { status: "healthy", p90_ms: p90 });
    await waitFor("meta at the last p90's revision", () => (metaOf(p.kv)?.rev ?? 0) >= rev);
    expect(p.kv.writesOf("routes").length).toBe(routesWrites);
    const routes = await kvRoutes(p.kv);
    expect(routes?.rev).toBe(first.rev);
    expect(metaOf(p.kv)?.rev).toBe(rev);
    // the pusher's pushed revision is the confirmed one: no lag
    await waitFor("status confirmed", () => p.pusher.status.pushedRevision === rev);
    expect(p.pusher.status.lagRevisions()).toBe(0);
    expect(await kvRevision(p.kv)).toBe(rev);
    // /status tells the two apart: confirmed at `rev`, routing last changed at `first.rev`
    expect(p.pusher.status.document()).toMatchObject({
      pushed_revision: rev,
      routes_revision: first.rev,
    });

    // a p90 past the watermark changes routing: routes is written at that revision
    const slow = await put(`${prefix}health/fra-1`, { status: "healthy", p90_ms: 1400 });
    const shed = await waitFor("routes with the shed", async () => {
      const m = await kvRoutes(p.kv);
      return m && m.rev >= slow ? m : null;
    });
    expect(shed.rev).toBe(slow);
    expect(shed.sheds?.["fra-1"]?.share).toBe(50);
    // meta follows in its own write slot
    await waitFor("meta at the shed's revision", () => metaOf(p.kv)?.rev === slow);
    await waitFor("status at the shed", () => p.pusher.status.routesRevision === slow);
  });

  it("a p90 that wanders around a shed level moves only meta, below_since included", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedSlowPool(prefix, 300);
    const p = suite.start({ prefix, electionKey });
    const slow = await put(`${prefix}health/fra-1`, { status: "healthy", p90_ms: 1400 });
    const shed = await waitFor("the 50 % shed in KV", async () => {
      const m = await kvRoutes(p.kv);
      return m && m.rev >= slow && m.sheds?.["fra-1"]?.share === 50 ? m : null;
    });
    const routesWrites = p.kv.writesOf("routes").length;
    // 1300 lets the 50 % share start to fall (below_since); 1450 stops it again. Neither moves
    // the share within SHED_RECOVER_SECONDS (60).
    let rev = 0;
    for (const p90 of [1300, 1450, 1310, 1420]) {
      rev = await put(`${prefix}health/fra-1`, { status: "healthy", p90_ms: p90 });
      await waitFor("meta at that revision", () => (metaOf(p.kv)?.rev ?? 0) >= rev);
    }
    expect(p.kv.writesOf("routes").length).toBe(routesWrites);
    const routes = await kvRoutes(p.kv);
    expect(routes?.rev).toBe(shed.rev);
    expect(routes?.sheds?.["fra-1"]).toEqual(shed.sheds?.["fra-1"]);
    expect(metaOf(p.kv)?.rev).toBe(rev);
  });

  it("a restarted pusher confirms the map in KV without rewriting it, then pushes the next change", async () => {
    const { prefix, electionKey } = uniqueNames();
    const seeded = await seedSlowPool(prefix, 300);
    const kv = new MemoryKv();
    const a = suite.start({ prefix, electionKey, kv, id: "pusher-a" });
    const pushed = await kvConverged(suite.client, kv, prefix, seeded);
    await a.stop();
    const quiet = await put(`${prefix}health/fra-1`, { status: "healthy", p90_ms: 450 });
    const routesWrites = kv.writesOf("routes").length;

    const b = suite.start({ prefix, electionKey, kv, id: "pusher-b" });
    await waitFor("b confirmed", () => {
      const m = metaOf(kv);
      return m?.pusher === "pusher-b" && m.rev >= quiet;
    });
    expect(kv.writesOf("routes").length).toBe(routesWrites);
    expect((await kvRoutes(kv))?.rev).toBe(pushed.rev);
    const confirmed = metaOf(kv)?.rev;
    await waitFor("b's status", () => b.pusher.status.pushedRevision === confirmed);

    const moved = await put(`${prefix}country/DE`, { primary: "par-1", fallbacks: [] });
    const after = await kvConverged(suite.client, kv, prefix, moved);
    expect(after.rev).toBe(moved);
    expect(after.countries.DE?.pool).toBe("par-1");
    // KV's revisions never went back, routes' nor meta's
    const revs = (key: string) =>
      kv.writesOf(key).map((w) => (JSON.parse(w.value) as { rev: number }).rev);
    for (const key of ["routes", "meta"]) {
      const seen = revs(key);
      expect(seen, key).toEqual([...seen].sort((x, y) => x - y));
    }
    expect(parseMap(kv.writesOf("routes").at(-1)?.value ?? "")?.rev).toBe(moved);
  });
});
