import type { Etcd3, IWatchResponse, Watcher } from "etcd3";
import { parseKey } from "../core/index.js";

/** What the watch reports; the data itself always comes from a fresh range read. */
export interface WatchTriggerHandlers {
  /** Something under the prefix changed at `revision`. */
  onChange(revision: number): void;
  /**
   * The watch can no longer be trusted: the stream dropped (etcd3 may skip events when it resumes
   * during catch-up) or etcd cancelled it (e.g. its start revision was compacted, after which
   * etcd3 goes silent). The owner must re-read the prefix and watch again from that read.
   */
  onLost(reason: "disconnected" | "cancelled", error: Error): void;
}

/**
 * A watch on the routing prefix used only as a trigger. `lock/apply` events are ignored: the
 * lock changes no routing, and `edgectl apply` always changes other keys under it.
 */
export class WatchTrigger {
  private watcher: Watcher | null = null;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly handlers: WatchTriggerHandlers,
  ) {}

  /** Watches from `fromRevision + 1`, replacing any previous watch. */
  start(fromRevision: number): void {
    this.stop();
    const watcher = this.client
      .watch()
      .prefix(this.prefix)
      .startRevision(String(fromRevision + 1))
      .watcher();
    this.watcher = watcher;
    const lose = (reason: "disconnected" | "cancelled", error: Error) => {
      if (this.watcher !== watcher) return;
      this.watcher = null;
      watcher.removeAllListeners();
      watcher.on("error", () => {});
      // A cancelled watch is already gone server-side; cancelling again would wait forever.
      if (reason === "disconnected") void watcher.cancel().catch(() => {});
      this.handlers.onLost(reason, error);
    };
    watcher.on("data", (res: IWatchResponse) => {
      if (this.watcher !== watcher) return;
      let newest = 0;
      for (const ev of res.events) {
        const rel = ev.kv.key.toString("utf8").slice(this.prefix.length);
        if (parseKey(rel).kind === "lock") continue;
        newest = Math.max(newest, Number(ev.kv.mod_revision));
      }
      if (newest > 0) this.handlers.onChange(newest);
    });
    watcher.on("disconnected", (e) => lose("disconnected", e));
    watcher.on("error", (e) => lose("cancelled", e));
  }

  /** Stops watching (does not wait for etcd to confirm). */
  stop(): void {
    const w = this.watcher;
    this.watcher = null;
    if (!w) return;
    w.removeAllListeners();
    w.on("error", () => {});
    void w.cancel().catch(() => {});
  }
}
