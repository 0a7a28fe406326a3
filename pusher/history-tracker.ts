import type { PrefixVersion } from "../adapters/prefix-read.js";

/** Why the pusher moved to a new etcd history. */
export type HistoryChange =
  | { readonly kind: "revision-went-back"; readonly from: number; readonly to: number }
  | { readonly kind: "cluster-changed"; readonly from: string; readonly to: string }
  | { readonly kind: "kv-from-older-history"; readonly kvRevision: number; readonly to: number }
  | { readonly kind: "kv-history-adopted"; readonly kvHistory: number };

/**
 * Which etcd history the pusher compiles in (`CompiledMap.history`). Within one history etcd's
 * revision only grows (linearizable reads, one at a time) and its cluster id stays; an etcd
 * restored from a snapshot goes back in revision, a replaced one answers with another cluster id.
 * Either, confirmed by a second, fresh read, starts history + 1. Clocks play no part.
 */
export class HistoryTracker {
  private current = 0;
  /** Newest revision read in the current history (0: nothing read yet). */
  private revision = 0;
  private clusterId: string | null = null;

  get history(): number {
    return this.current;
  }

  /** True when `read` does not fit the current history (it needs a confirming read). */
  suspect(read: Pick<PrefixVersion, "revision" | "clusterId">): boolean {
    if (this.revision === 0) return false;
    return (
      read.revision < this.revision ||
      (this.clusterId !== null && read.clusterId !== this.clusterId)
    );
  }

  /**
   * Takes a read into account; `confirming` says it is the fresh read taken after a suspect one.
   * Returns the change when it starts a new history, else `null`.
   */
  record(
    read: Pick<PrefixVersion, "revision" | "clusterId">,
    confirming: boolean,
  ): HistoryChange | null {
    let change: HistoryChange | null = null;
    if (confirming && this.suspect(read)) {
      change =
        this.clusterId !== null && read.clusterId !== this.clusterId
          ? { kind: "cluster-changed", from: this.clusterId, to: read.clusterId }
          : { kind: "revision-went-back", from: this.revision, to: read.revision };
      this.current += 1;
      this.revision = read.revision;
    } else if (!this.suspect(read)) {
      this.revision = Math.max(this.revision, read.revision);
    } else {
      return null;
    }
    this.clusterId = read.clusterId;
    return change;
  }

  /**
   * Squares the current history with the map found in KV, given etcd's revision from a fresh
   * read. Only a KV map ordered after the newest compile matters (a stale copy never does):
   * a revision above etcd's means the map came from an older history, so the next one starts;
   * otherwise another pusher already moved to the map's history, which is adopted.
   */
  followKv(
    kv: { readonly history: number; readonly rev: number },
    compiled: { readonly history: number; readonly rev: number },
    etcdRevision: number,
  ): HistoryChange | null {
    const ahead =
      kv.history > compiled.history || (kv.history === compiled.history && kv.rev > compiled.rev);
    if (!ahead || compiled.history !== this.current) return null;
    if (kv.rev > etcdRevision) {
      this.current = kv.history + 1;
      return { kind: "kv-from-older-history", kvRevision: kv.rev, to: this.current };
    }
    if (kv.history > this.current) {
      this.current = kv.history;
      return { kind: "kv-history-adopted", kvHistory: kv.history };
    }
    return null;
  }
}
