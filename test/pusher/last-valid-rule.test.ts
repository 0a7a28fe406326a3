import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { type CompiledMap, parseMap } from "../../core/index.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import { kvRoutes, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

const chain = (m: CompiledMap | null) => m?.countries.DE?.chain.map((c) => c.pool) ?? [];

describe("last valid rule across pusher restarts (real etcd, docs/reference.md §3.4)", () => {
  it("an invalid rule heals after a pool restart, all pools down and back, with a new pusher each time", async () => {
    const { prefix, electionKey } = uniqueNames();
    const kv = new MemoryKv();
    const put = (k: string, v: unknown) =>
      ctx.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
    const gone = (k: string) => ctx.client.delete().key(`${prefix}${k}`);
    /** Waits until KV routes DE along `want`, and returns that map. */
    const routesDe = (want: string[], what: string) =>
      waitFor(what, async () => {
        const m = await kvRoutes(kv);
        return m && chain(m).join(">") === want.join(">") ? m : null;
      });
    await seedRouting(ctx.client, prefix);

    const a = ctx.start({ prefix, electionKey, kv });
    await routesDe(["fra-1", "ams-1", "par-1"], "DE on its rule");
    // (1) the rule turns invalid while fra-1's heartbeat restarts (its health key is gone)
    await put("country/DE", "{broken");
    await gone("health/fra-1");
    const during = await routesDe(["ams-1", "par-1"], "DE without fra-1");
    expect(during.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    await a.crash();

    // a new pusher knows the rule only from KV's map
    const b = ctx.start({ prefix, electionKey, kv });
    await put("health/fra-1", { status: "healthy" });
    await routesDe(["fra-1", "ams-1", "par-1"], "fra-1 back in DE's chain after the restart");

    // (2) every pool down
    for (const pool of ["fra-1", "ams-1", "par-1"]) await gone(`health/${pool}`);
    const down = await waitFor("DE on the floor", async () => {
      const m = await kvRoutes(kv);
      return m?.countries.DE?.source === "floor" ? m : null;
    });
    expect(down.countries.DE?.degraded).toBe("all-pools-unhealthy");
    await b.stop();

    // (3) all back, under yet another pusher: DE is on its primary again
    ctx.start({ prefix, electionKey, kv });
    for (const pool of ["fra-1", "ams-1", "par-1"])
      await put(`health/${pool}`, { status: "healthy" });
    const healed = await routesDe(["fra-1", "ams-1", "par-1"], "DE healed onto its primary");
    expect(healed.countries.DE).toMatchObject({
      pool: "fra-1",
      source: "country/DE",
      degraded: null,
    });
    expect(healed.problems).toContain("country/DE: invalid JSON");
  }, 60_000);

  it("a new leader's first write keeps DE's kept chain when a compile lands during its slow KV read", async () => {
    const { prefix, electionKey } = uniqueNames();
    /** KV whose `routes` reads take 300 ms once armed, with a hook run as each read starts. */
    class SlowReadKv extends MemoryKv {
      onRead: (() => Promise<void>) | null = null;
      override async get(key: string): Promise<string | null> {
        if (key === "routes" && this.onRead) {
          const hook = this.onRead;
          const value = super.get(key);
          await Promise.all([hook(), sleep(300)]);
          return value;
        }
        return super.get(key);
      }
    }
    const kv = new SlowReadKv();
    const put = (k: string, v: unknown) =>
      ctx.client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
    await seedRouting(ctx.client, prefix);
    const a = ctx.start({ prefix, electionKey, kv });
    await waitFor(
      "DE on its rule",
      async () => chain(await kvRoutes(kv)).join(">") === "fra-1>ams-1>par-1",
    );
    await put("country/DE", "{broken");
    await waitFor("DE's rule kept", async () => (await kvRoutes(kv))?.kept?.DE !== undefined);
    await a.crash();

    const writesBefore = kv.writes.length;
    let reads = 0;
    let changedAt = 0;
    kv.onRead = async () => {
      reads += 1;
      // An unrelated change: its compile lands while the read is in flight.
      await put("country/FR", { primary: "par-1", fallbacks: [] });
      changedAt = Date.now();
    };
    ctx.start({ prefix, electionKey, kv });
    const first = await waitFor("the new leader's first routes write", () =>
      kv.writes.slice(writesBefore).find((w) => w.key === "routes"),
    );
    expect(reads).toBeGreaterThan(0);
    expect(changedAt).toBeGreaterThan(0);
    const map = parseMap(first.value);
    expect(chain(map)).toEqual(["fra-1", "ams-1", "par-1"]);
    expect(map?.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    expect(map?.problems).toContain("country/DE: invalid JSON");
  }, 30_000);
});
