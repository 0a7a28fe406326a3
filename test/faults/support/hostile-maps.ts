import { randomBytes } from "node:crypto";
import { serializeMap } from "../../../core/index.js";
import { FIRST_HISTORY_REV, mapAt, pick, type Rand } from "./hostile-requests.js";

/** Where `HostileMaps` writes: the Worker's `routes` key (each write settles the isolate). */
export interface MapSink {
  put(text: string): Promise<void>;
  remove(): Promise<void>;
}

/**
 * The `routes` documents of scenario 7: newer maps, stale copies (older revisions, older
 * histories, any `compiled_at`), truncated, mistyped, missing, garbage and huge ones, and one
 * simulated restore (a new history whose revisions start again at 1).
 */
export class HostileMaps {
  rev = FIRST_HISTORY_REV;
  history = 0;
  newestPut = 0;
  /** Map swaps so far. */
  changes = 0;
  /**
   * Set by a newer put, cleared by the next swap: the isolate re-reads KV on every request
   * (ISOLATE_CACHE_SECONDS=0), so until then every answer must carry exactly this rev.
   */
  mustServe: number | null = null;

  constructor(
    private readonly r: Rand,
    private readonly origins: Record<string, string>,
    private readonly sink: MapSink,
  ) {}

  /** Puts a map `step` revisions newer than the last. */
  async putNewer(step: number): Promise<void> {
    this.rev += step;
    this.newestPut = this.rev;
    await this.sink.put(serializeMap(mapAt(this.rev, this.origins, this.rev, this.history)));
    this.mustServe = this.rev;
  }

  /** etcd restored from a snapshot: the next history, revisions from 1. */
  async restore(): Promise<void> {
    this.changes += 1;
    this.history += 1;
    this.rev = 0;
    await this.putNewer(1);
  }

  /** One random swap of the `routes` document. */
  async mutate(): Promise<void> {
    const r = this.r;
    this.changes += 1;
    this.mustServe = null;
    const kind = pick(r, [
      "newer",
      "newer",
      "older",
      "truncated",
      "wrong-type",
      "missing",
      "garbage",
      "huge",
    ]);
    const rev = this.rev;
    switch (kind) {
      case "newer":
        return this.putNewer(1 + Math.floor(r() * 5));
      case "older": {
        // A stale copy KV may still serve: a lower revision of this history, or any revision
        // of an older one, with any compiled_at (clocks decide nothing).
        const oldHistory = this.history > 0 && r() < 0.5;
        const floor = this.history > 0 ? 1 : FIRST_HISTORY_REV;
        const staleRev = oldHistory
          ? FIRST_HISTORY_REV + Math.floor(r() * 100_000)
          : Math.max(floor, rev - 1 - Math.floor(r() * 50));
        const when = new Date(Date.now() + Math.floor((r() - 0.5) * 1_200_000));
        const history = oldHistory ? this.history - 1 : this.history;
        return this.sink.put(serializeMap(mapAt(staleRev, this.origins, rev + 1, history, when)));
      }
      case "truncated": {
        const text = serializeMap(mapAt(rev, this.origins, rev, this.history));
        return this.sink.put(text.slice(0, Math.floor(r() * text.length)));
      }
      case "wrong-type":
        return this.sink.put(
          pick(r, [
            "[]",
            "42",
            "null",
            "true",
            '"routes"',
            '{"v":2}',
            `{"v":1,"rev":"${rev + 9}"}`,
            `{"v":1,"rev":${rev + 9},"default":null,"countries":[]}`,
          ]),
        );
      case "missing":
        return this.sink.remove();
      case "garbage":
        return this.sink.put(randomBytes(200).toString("latin1"));
      default:
        return this.sink.put(`{"v":1,"rev":${rev + 10},"pad":"${"x".repeat(2_000_000)}"`);
    }
  }
}
