import type { Logger } from "pino";
import type { CompiledMap } from "../core/index.js";
import type { HistoryChange, HistoryTracker } from "./history-tracker.js";
import type { PusherStatus } from "./status.js";

/** What following a new etcd history touches. */
export interface HistoryFollowerOptions {
  readonly history: HistoryTracker;
  readonly status: PusherStatus;
  readonly logger: Logger;
  /** Counts the move and reports it (`WriteScheduler.historyChanged`). */
  readonly report: (message: string) => void;
  /** Compiles now and resolves to the revision of that fresh read. */
  readonly compileNow: () => Promise<number>;
  /** Asks for another compile, stamped with the new history. */
  readonly recompile: () => void;
}

/**
 * Acts on a move to a new etcd history, whether the compile loop saw etcd go back (or change
 * cluster) or KV holds a map ordered after the newest compile.
 */
export class HistoryFollower {
  constructor(private readonly o: HistoryFollowerOptions) {}

  /** Reports a move to a new history; the next compile carries it into KV. */
  followed(change: HistoryChange, revision: number): void {
    const { history, status, logger } = this.o;
    status.newHistory(history.history, revision);
    if (change.kind === "kv-history-adopted") {
      // Another pusher followed the new history first: nothing new happened to etcd.
      logger.info({ history: history.history }, "taking the etcd history of the map in KV");
      return;
    }
    const message = `etcd started a new history (${change.kind}): following it as history ${history.history} from revision ${revision}`;
    logger.error({ change, history: history.history, revision }, message);
    this.o.report(message);
  }

  /**
   * KV holds `kvMap`, ordered after the newest compile. A fresh read gives etcd's current
   * revision: a KV revision above it came from an older history; a higher history at or below
   * it was written by a pusher that followed this etcd's history first.
   */
  async kvAhead(kvMap: CompiledMap, stopped: () => boolean): Promise<void> {
    const revision = await this.o.compileNow();
    if (stopped() || revision <= 0) return;
    const { history } = this.o;
    const change = history.followKv(kvMap, { history: history.history, rev: revision }, revision);
    if (!change) return;
    this.followed(change, revision);
    this.o.recompile();
  }
}
