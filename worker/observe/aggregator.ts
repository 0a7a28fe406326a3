import { KEPT_MINUTES, pruneAt } from "./kept-minutes.js";
import { emptyTally, mergeTally, type Tally } from "./tally.js";
import { minuteOf, type TallyRow } from "./tally-row.js";
import { tallyRowsOf } from "./tally-rows-shape.js";

const SCHEMA = `CREATE TABLE IF NOT EXISTS tallies (
  minute INTEGER NOT NULL,
  country TEXT NOT NULL,
  pool TEXT NOT NULL,
  side TEXT NOT NULL,
  tally TEXT NOT NULL,
  PRIMARY KEY (minute, country, pool, side)
) WITHOUT ROWID`;

/** The table of the layout without a canary side: dropped, it held 16 minutes at most. */
const OLD_TABLE = "DROP TABLE IF EXISTS buckets";

function answer(status: number, text: string): Response {
  return new Response(`${text}\n`, { status, headers: { "Content-Type": "text/plain" } });
}

/**
 * The Durable Object that sums the isolates' flushes (docs/reference.md §12), one of
 * `OBSERVE_SHARDS`: a SQLite table of one tally per (minute, country, pool, canary side), 16 minutes deep.
 * `POST /add` merges a flush; `GET /read?since=MINUTE` returns the rows from that minute on.
 * An alarm set for when the oldest held minute expires drops it, so no shard keeps more than 16
 * minutes whether or not flushes still reach it, and an idle object ends up empty.
 */
export class ObservationAggregator {
  readonly #state: DurableObjectState;

  constructor(state: DurableObjectState, _env: unknown) {
    this.#state = state;
    state.storage.sql.exec(OLD_TABLE);
    state.storage.sql.exec(SCHEMA);
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (request.method === "POST" && url.pathname === "/add") return this.#add(request);
    if (request.method === "GET" && url.pathname === "/read") return this.#read(url);
    return answer(404, "Not Found");
  }

  async alarm(): Promise<void> {
    const oldest = this.#prune(minuteOf(Date.now()));
    if (oldest !== null) await this.#state.storage.setAlarm(pruneAt(oldest));
  }

  async #add(request: Request): Promise<Response> {
    let body: unknown;
    try {
      body = await request.json();
    } catch {
      return answer(400, "flush: body is not JSON");
    }
    const rows = tallyRowsOf(body);
    if (rows === null) return answer(400, "flush: not a list of tally rows");
    const now = minuteOf(Date.now());
    const sql = this.#state.storage.sql;
    this.#state.storage.transactionSync(() => {
      for (const row of rows) {
        if (row.minute < now - KEPT_MINUTES + 1 || row.minute > now + 1) continue;
        const held = sql
          .exec<{ tally: string }>(
            "SELECT tally FROM tallies WHERE minute = ? AND country = ? AND pool = ? AND side = ?",
            row.minute,
            row.country,
            row.pool,
            row.side ?? "",
          )
          .toArray()[0];
        // Merged into an empty tally: a stored one may predate a field (`cache`).
        const sum = emptyTally();
        if (held) mergeTally(sum, JSON.parse(held.tally) as Tally);
        mergeTally(sum, row.tally);
        sql.exec(
          "INSERT OR REPLACE INTO tallies (minute, country, pool, side, tally) VALUES (?, ?, ?, ?, ?)",
          row.minute,
          row.country,
          row.pool,
          row.side ?? "",
          JSON.stringify(sum),
        );
      }
    });
    const oldest = this.#prune(now);
    if (oldest !== null) {
      const due = pruneAt(oldest);
      const set = await this.#state.storage.getAlarm();
      if (set === null || set > due) await this.#state.storage.setAlarm(due);
    }
    return new Response(null, { status: 204 });
  }

  #read(url: URL): Response {
    const raw = url.searchParams.get("since") ?? "";
    if (!/^\d{1,12}$/.test(raw)) return answer(400, "read: since must be a minute number");
    const rows: TallyRow[] = this.#state.storage.sql
      .exec<{ minute: number; country: string; pool: string; side: string; tally: string }>(
        "SELECT minute, country, pool, side, tally FROM tallies WHERE minute >= ?",
        Number(raw),
      )
      .toArray()
      .map((r) => ({
        minute: r.minute,
        country: r.country,
        pool: r.pool,
        ...(r.side === "" ? {} : { side: r.side }),
        tally: JSON.parse(r.tally) as Tally,
      }));
    return Response.json({ rows });
  }

  /** Drops minutes older than the kept ones; returns the oldest minute left, or null. */
  #prune(now: number): number | null {
    const sql = this.#state.storage.sql;
    sql.exec("DELETE FROM tallies WHERE minute < ?", now - KEPT_MINUTES + 1);
    const left = sql
      .exec<{ m: number | null }>("SELECT min(minute) AS m FROM tallies")
      .toArray()[0];
    return left?.m ?? null;
  }
}
