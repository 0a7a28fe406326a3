import type { Etcd3 } from "etcd3";
import { type PagedRangeOptions, readRangePages } from "../adapters/paged-range.js";
import type { PrefixVersion } from "../adapters/prefix-read.js";
import { RoutingIndex } from "../core/index.js";
import { ObservedMap } from "./observed-map.js";
import { readPrefixDelta } from "./prefix-version.js";

/** Why a read went through the whole prefix instead of only what changed. */
export type FullReadReason =
  | "first"
  | "asked"
  | "too-many-changes"
  | "too-many-deletes"
  | "unproven-deletes"
  | "other-cluster"
  | "revision-back";

/** One read of the prefix, as the mirror took it. */
export interface MirrorRead extends PrefixVersion {
  /** `delta`: etcd sent only the keys modified since the last read; `full`: every key. */
  readonly kind: "delta" | "full";
  /** For a full read: why the delta was not used (null when none was possible to try). */
  readonly reason: FullReadReason | null;
  /** Range requests that returned data, and restarts after a compaction between pages. */
  readonly pages: number;
  readonly restarts: number;
  /** Keys put or deleted since the last read (every key for a full read). */
  readonly changed: number;
}

/** Tuning of a {@link PrefixMirror}. */
export interface PrefixMirrorOptions {
  /** Most changed keys one delta read may carry before the read is a full one. */
  readonly deltaKeys?: number;
  /** Most deletions remembered between reads before the next read is a full one. */
  readonly maxDeletes?: number;
  /** Paging of full reads (tests make pages small). */
  readonly paging?: PagedRangeOptions;
}

/**
 * The decoded state of the prefix at the revision of the last read (a {@link RoutingIndex}),
 * brought up to date by range reads. After a first full read, each read is one range request
 * over the whole prefix at one revision that etcd filters to the keys modified since the last
 * read (`min_mod_revision`), plus the prefix's key count. Puts are thereby complete whatever
 * the watch delivered. Deletions leave no key to return, so the watch's delete events name
 * candidates: a candidate deleted after the last read that the read does not return is gone at
 * the read's revision, and the read is accepted only if the count then matches exactly (held
 * keys + new keys − deletions). Any doubt (a count that does not add up, a lost watch that
 * dropped a delete event, another cluster, a revision that went back, too many changes) makes
 * the read a full one, so the state is always exactly the prefix at one revision (docs/reference.md §5.3).
 */
export class PrefixMirror {
  private current: RoutingIndex;
  private observations: ObservedMap;
  private base: { revision: number; clusterId: string } | null = null;
  /** Delete events by key and revision, kept until a read past their revision. */
  private deletes = new Map<string, number>();
  private deletesOverflowed = false;
  private readonly deltaKeys: number;
  private readonly maxDeletes: number;
  private readonly paging: PagedRangeOptions;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    opts: PrefixMirrorOptions = {},
  ) {
    this.current = new RoutingIndex(prefix);
    this.observations = new ObservedMap(prefix);
    this.deltaKeys = opts.deltaKeys ?? 1_000;
    this.maxDeletes = opts.maxDeletes ?? 10_000;
    this.paging = opts.paging ?? {};
  }

  /** The decoded state at the last read's revision. */
  get index(): RoutingIndex {
    return this.current;
  }

  /** The `observed/` values at the last read's revision. */
  get observed(): ObservedMap {
    return this.observations;
  }

  /** A delete event of the watch: `key` (prefix included) was deleted at `revision`. */
  noteDeleted(key: string, revision: number): void {
    if (this.base && revision <= this.base.revision) return;
    if (this.deletes.size >= this.maxDeletes && !this.deletes.has(key)) {
      this.deletesOverflowed = true;
      return;
    }
    this.deletes.set(key, Math.max(revision, this.deletes.get(key) ?? 0));
  }

  /** Brings the state up to the current revision; `full` reads every key whatever the delta says. */
  async read(full = false): Promise<MirrorRead> {
    const base = this.base;
    let reason: FullReadReason = base ? "asked" : "first";
    if (!full && base) {
      if (this.deletesOverflowed) reason = "too-many-deletes";
      else {
        const delta = await readPrefixDelta(
          this.client,
          this.prefix,
          base.revision,
          this.deltaKeys,
        );
        if (!delta) reason = "too-many-changes";
        else if (delta.clusterId !== base.clusterId) reason = "other-cluster";
        else if (delta.revision < base.revision) reason = "revision-back";
        else {
          const applied = this.applyDelta(base.revision, delta);
          if (applied !== null) return applied;
          reason = "unproven-deletes";
        }
      }
    }
    return this.readFull(reason);
  }

  private applyDelta(
    since: number,
    delta: NonNullable<Awaited<ReturnType<typeof readPrefixDelta>>>,
  ): MirrorRead | null {
    const changedKeys = new Set(delta.changed.map((e) => e.key));
    let added = 0;
    for (const key of changedKeys) if (!this.current.has(key)) added += 1;
    const gone: string[] = [];
    for (const [key, revision] of this.deletes) {
      if (
        revision > since &&
        revision <= delta.revision &&
        !changedKeys.has(key) &&
        this.current.has(key)
      )
        gone.push(key);
    }
    if (this.current.size + added - gone.length !== delta.count) return null;
    for (const entry of delta.changed) {
      this.current.upsert(entry);
      this.observations.upsert(entry);
    }
    for (const key of gone) {
      this.current.delete(key);
      this.observations.delete(key);
    }
    this.settle(delta.revision, delta.clusterId);
    return {
      kind: "delta",
      reason: null,
      revision: delta.revision,
      clusterId: delta.clusterId,
      count: delta.count,
      newestModRevision: this.current.newestModRevision,
      pages: 1,
      restarts: 0,
      changed: delta.changed.length + gone.length,
    };
  }

  /**
   * Every key, page by page into a new index (etcd's messages are never held whole), which
   * replaces the current one only once the read is complete: a failed read leaves it as it was.
   */
  private async readFull(reason: FullReadReason): Promise<MirrorRead> {
    const base = this.base;
    let next = this.current.successor();
    let observed = new ObservedMap(this.prefix);
    let newest = 0;
    const res = await readRangePages(
      this.client,
      this.prefix,
      () => {
        let first = true;
        newest = 0;
        return (kvs, at) => {
          if (first) {
            first = false;
            // A mod_revision names one value only within one history: decode everything afresh.
            const sameHistory =
              !base || (at.clusterId === base.clusterId && at.revision >= base.revision);
            next = sameHistory ? this.current.successor() : new RoutingIndex(this.prefix);
            observed = new ObservedMap(this.prefix);
          }
          for (const kv of kvs) {
            const modRevision = Number(kv.mod_revision);
            newest = Math.max(newest, modRevision);
            const entry = { key: kv.key.toString("utf8"), value: kv.value, modRevision };
            next.upsert(entry);
            observed.upsert(entry);
          }
        };
      },
      this.paging,
    );
    next.seal();
    this.current = next;
    this.observations = observed;
    this.settle(res.revision, res.clusterId);
    return {
      kind: "full",
      reason,
      revision: res.revision,
      clusterId: res.clusterId,
      count: res.count,
      newestModRevision: newest,
      pages: res.pages,
      restarts: res.restarts,
      changed: res.count,
    };
  }

  private settle(revision: number, clusterId: string): void {
    this.base = { revision, clusterId };
    for (const [key, r] of this.deletes) if (r <= revision) this.deletes.delete(key);
    this.deletesOverflowed = false;
  }
}
