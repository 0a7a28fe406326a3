import type { Etcd3, IWatchResponse, Watcher } from "etcd3";
import { parseKey } from "../core/index.js";

/** What the watch reports; the data itself always comes from a fresh range read. */
export interface WatchTriggerHandlers {
  /** Something under the prefix changed at `revision`. */
  onChange(revision: number): void;
  /**
   * `key` (prefix included, `lock/apply` too) was deleted at `revision`: a candidate the next
   * read checks, since a deleted key is not in a read of what changed. Called before `onChange`.
   */
  onDeleted?(key: string, revision: number): void;
  /**
   * The watch can no longer be trusted: the stream dropped (etcd3 may skip events when it resumes
   * during catch-up) or etcd cancelled it (e.g. its start revision was compacted, after which
   * etcd3 goes silent). The owner must re-read the prefix and watch again from that read.
   */
  onLost(reason: "disconnected" | "cancelled", error: Error): void;
}

/** Where the watch's client comes from: `connect` opens a new one, to move off a member. */
export interface WatchConnection {
  readonly connect: () => Etcd3;
  /** Closes clients it opened (false for a shared client that someone else closes). */
  readonly owned: boolean;
}

/**
 * A watch on the routing prefix used only as a trigger. `lock/apply` events are ignored: the
 * lock changes no routing, and `edgectl apply` always changes other keys under it. It remembers
 * up to which revision it has delivered, so a silent watch can be told from a quiet prefix.
 */
export class WatchTrigger {
  private watcher: Watcher | null = null;
  private current: Etcd3;
  private covered: number | null = null;

  constructor(
    private readonly connection: WatchConnection,
    private readonly prefix: string,
    private readonly handlers: WatchTriggerHandlers,
  ) {
    this.current = connection.connect();
  }

  /** The client the watch runs on (the probe reads through it too). */
  get client(): Etcd3 {
    return this.current;
  }

  /** The newest revision the running watch has shown everything up to; `null` when stopped. */
  get coveredRevision(): number | null {
    return this.covered;
  }

  /** Watches from `fromRevision + 1`, replacing any previous watch. */
  start(fromRevision: number): void {
    this.stop();
    const watcher = this.current
      .watch()
      .prefix(this.prefix)
      .startRevision(String(fromRevision + 1))
      .watcher();
    this.watcher = watcher;
    this.covered = fromRevision;
    const lose = (reason: "disconnected" | "cancelled", error: Error) => {
      if (this.watcher !== watcher) return;
      this.watcher = null;
      this.covered = null;
      watcher.removeAllListeners();
      watcher.on("error", () => {});
      // A cancelled watch is already gone server-side; cancelling again would wait forever.
      if (reason === "disconnected") void watcher.cancel().catch(() => {});
      this.handlers.onLost(reason, error);
    };
    watcher.on("data", (res: IWatchResponse) => {
      if (this.watcher !== watcher) return;
      let newest = 0;
      // Only events count: during a catch-up the header's revision runs ahead of the batch.
      let covered = 0;
      for (const ev of res.events) {
        const revision = Number(ev.kv.mod_revision);
        covered = Math.max(covered, revision);
        const key = ev.kv.key.toString("utf8");
        if (ev.type === "Delete") this.handlers.onDeleted?.(key, revision);
        if (parseKey(key.slice(this.prefix.length)).kind === "lock") continue;
        newest = Math.max(newest, revision);
      }
      this.covered = Math.max(this.covered ?? 0, covered);
      if (newest > 0) this.handlers.onChange(newest);
    });
    watcher.on("disconnected", (e) => lose("disconnected", e));
    watcher.on("error", (e) => lose("cancelled", e));
  }

  /**
   * Drops the client with its connections and opens a new one, which picks a member afresh:
   * how a watch found silent moves off a member that stopped serving it. Call `start` after.
   */
  reconnect(): void {
    this.stop();
    if (!this.connection.owned) return;
    const old = this.current;
    this.current = this.connection.connect();
    old.close();
  }

  /** Stops watching (does not wait for etcd to confirm). */
  stop(): void {
    const w = this.watcher;
    this.watcher = null;
    this.covered = null;
    if (!w) return;
    w.removeAllListeners();
    w.on("error", () => {});
    void w.cancel().catch(() => {});
  }

  /** Stops watching and closes the client if this trigger opened it. */
  close(): void {
    this.stop();
    if (this.connection.owned) this.current.close();
  }
}
