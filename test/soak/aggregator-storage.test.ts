import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregatorStorage } from "../../soak/aggregator-storage.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";

describe("the aggregator's storage, read beside workerd (soak/aggregator-storage.ts)", () => {
  let dir: string;
  let worker: TestWorker;
  let origins: Origins;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "soak-aggregator-"));
    origins = await startOrigins(["floor-1"]);
    // no map: every country goes to the floor pool, a real origin on loopback
    worker = await startWorker(
      {
        FLOOR_POOL: "floor-1",
        ORIGIN_TEMPLATE: origins.get("floor-1").url,
        OBSERVE_FLUSH_SECONDS: "0",
        OBSERVE_TOKEN: "soak-test-token",
      },
      { persistDir: dir },
    );
  });

  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is null before any object exists", async () => {
    expect(await aggregatorStorage(join(dir, "nothing-here"))).toBeNull();
  });

  it("counts each (minute, country, pool) row the shards hold, their bytes and the oldest minute", async () => {
    const countries = ["DE", "FR", "JP"];
    for (let i = 0; i < 30; i++) {
      const res = await worker.dispatch(`/seg/${i}.ts`, {
        country: countries[i % countries.length] ?? "DE",
      });
      expect(res.headers.get("x-edge-pool")).toBe("floor-1");
    }
    // flushes go out after each response (waitUntil): wait until the three pairs are stored
    let s = await aggregatorStorage(dir);
    for (let i = 0; i < 100 && (s?.rows ?? 0) < countries.length; i++) {
      await sleep(100);
      s = await aggregatorStorage(dir);
    }
    const minute = Math.floor(Date.now() / 60_000);
    expect(s).not.toBeNull();
    // each flush lands on one shard at random: a pair's rows of one minute are 1 to 8
    expect(s?.rows).toBeGreaterThanOrEqual(countries.length);
    expect(s?.rows).toBeLessThanOrEqual(countries.length * 8 * 2);
    expect(s?.objects).toBeGreaterThanOrEqual(1);
    expect(s?.bytes).toBeGreaterThan(0);
    expect(s?.fileBytes).toBeGreaterThan(0);
    expect(s?.oldestMinute).toBeGreaterThanOrEqual(minute - 1);
    expect(s?.oldestMinute).toBeLessThanOrEqual(minute);
  });

  it("counts the rows of whichever table is keyed by minute, and leaves workerd's own out", async () => {
    const other = mkdtempSync(join(tmpdir(), "soak-aggregator-layout-"));
    try {
      const objects = join(other, "do", "edge-ObservationAggregator");
      mkdirSync(objects, { recursive: true });
      const db = new DatabaseSync(join(objects, "0123abcd.sqlite"));
      // as workerd keeps it: in WAL mode, nothing checkpointed into the file yet
      db.exec("PRAGMA journal_mode = WAL");
      db.exec("PRAGMA wal_autocheckpoint = 0");
      db.exec(
        "CREATE TABLE tallies (minute INTEGER, country TEXT, pool TEXT, side TEXT, tally TEXT)",
      );
      db.exec("CREATE TABLE _cf_KV (key TEXT, value BLOB)");
      db.exec("INSERT INTO _cf_KV VALUES ('alarm', x'00')");
      for (const [minute, side] of [
        [100, ""],
        [101, ""],
        [101, "canary"],
      ] as const)
        db.prepare("INSERT INTO tallies VALUES (?, 'DE', 'p02', ?, '{}')").run(minute, side);
      const s = await aggregatorStorage(other);
      const fileSize = statSync(join(objects, "0123abcd.sqlite")).size;
      db.close();
      expect(s).toMatchObject({ objects: 1, rows: 3, oldestMinute: 100 });
      // the schema page and the two tables', read through the WAL: the database file itself
      // holds only the first page, as workerd's do until a checkpoint
      expect(s?.bytes).toBe(3 * 4096);
      expect(fileSize).toBe(4096);
      expect(s?.fileBytes).toBeGreaterThan(s?.bytes ?? 0);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
