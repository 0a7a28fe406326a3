import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/** What the Worker's Durable Object aggregator keeps on disk (workerd's persist directory). */
export interface AggregatorStorage {
  /**
   * Bytes of its databases as its objects see them (page count × page size, committed pages in
   * the WAL included): what `ctx.storage.sql.databaseSize` reports and Cloudflare bills.
   */
  readonly bytes: number;
  /**
   * Bytes of every file of its objects: each shard's SQLite file, WAL and shared memory. workerd
   * checkpoints a WAL only once it holds 1,000 pages (SQLite's default), so this figure climbs
   * towards ~4 MiB a shard at the soak's write rate while the databases hold still.
   */
  readonly fileBytes: number;
  /** Shard databases found. */
  readonly objects: number;
  /** Rows of its tables keyed by minute, all shards together (one per minute, country, pool…). */
  readonly rows: number;
  /** The oldest minute any shard holds (minutes since the epoch); null when it holds none. */
  readonly oldestMinute: number | null;
}

/** Miniflare keeps a class's objects in `do/{script}-{class}/` under the persist directory. */
const AGGREGATOR_DIR = /-ObservationAggregator$/;

/**
 * Sizes the aggregator's files under `persistDir` and counts its rows, reading each shard's
 * database read-only beside workerd (SQLite's own locking). Null before the first object
 * exists; a shard whose table cannot be read yet counts its bytes and no rows.
 */
export async function aggregatorStorage(persistDir: string): Promise<AggregatorStorage | null> {
  let dirs: string[];
  try {
    dirs = (await readdir(join(persistDir, "do"))).filter((d) => AGGREGATOR_DIR.test(d));
  } catch {
    return null;
  }
  let bytes = 0;
  let fileBytes = 0;
  let objects = 0;
  let rows = 0;
  let oldest: number | null = null;
  for (const d of dirs) {
    const dir = join(persistDir, "do", d);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      fileBytes += (await stat(path).catch(() => null))?.size ?? 0;
      if (!name.endsWith(".sqlite") || name === "metadata.sqlite") continue;
      objects += 1;
      const held = bucketRows(path);
      if (!held) continue;
      bytes += held.bytes;
      rows += held.rows;
      if (held.oldest !== null)
        oldest = oldest === null ? held.oldest : Math.min(oldest, held.oldest);
    }
  }
  return objects === 0 ? null : { bytes, fileBytes, objects, rows, oldestMinute: oldest };
}

/**
 * Rows and the oldest minute of every table of the shard with a `minute` column (the
 * aggregator's one-minute tallies, whatever its schema calls the table); workerd's own tables
 * (`_cf_…`) are left out.
 */
function bucketRows(path: string): { bytes: number; rows: number; oldest: number | null } | null {
  let db: DatabaseSync | null = null;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 4) != '_cf_' AND substr(name, 1, 7) != 'sqlite_'",
      )
      .all() as Array<{ name: string }>;
    let rows = 0;
    let oldest: number | null = null;
    for (const { name } of tables) {
      const quoted = `"${name.replaceAll('"', '""')}"`;
      const columns = db.prepare(`PRAGMA table_info(${quoted})`).all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === "minute")) continue;
      const r = db.prepare(`SELECT count(*) AS n, min(minute) AS m FROM ${quoted}`).get() as
        | { n: number; m: number | null }
        | undefined;
      if (!r) continue;
      rows += r.n;
      if (r.m !== null) oldest = oldest === null ? r.m : Math.min(oldest, r.m);
    }
    const pages = db.prepare("PRAGMA page_count").get() as { page_count: number } | undefined;
    const size = db.prepare("PRAGMA page_size").get() as { page_size: number } | undefined;
    return { bytes: (pages?.page_count ?? 0) * (size?.page_size ?? 0), rows, oldest };
  } catch {
    // not created yet, or busy: its files still count
    return null;
  } finally {
    db?.close();
  }
}
