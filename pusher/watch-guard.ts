import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import type { PrefixVersion } from "../adapters/prefix-read.js";
import type { Clock } from "./clock.js";
import { type PrefixHead, readPrefixHead, readPrefixVersion } from "./prefix-version.js";
import type { PusherStatus } from "./status.js";

/** What the guard watches over and whom it tells. */
export interface WatchGuardOptions {
  readonly prefix: string;
  /** How often the prefix's version is read (about 1 s). */
  readonly intervalMs: number;
  /** How long the watch may owe a change the probe already saw before it counts as silent. */
  readonly silenceMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly status: PusherStatus;
  /** The watch's client: a probe failing on a member resets its connections, watch included. */
  readonly client: () => Etcd3;
  /** The version the newest compile read. */
  readonly compiled: () => PrefixVersion | null;
  /** Up to which revision the running watch has delivered (`null`: no watch running). */
  readonly watched: () => number | null;
  /** The prefix differs from the newest compile: compile again. */
  readonly onMoved: () => void;
  /** The watch has been silent while the prefix moved: replace it. */
  readonly onSilent: (owed: number) => void;
}

/**
 * Watch silence is not trusted (docs/reference.md §5.3): etcd3 1.1.2 never asks for a leader on its own, and a
 * member cut off from its peers keeps a watch open without sending anything. About once a second
 * the guard reads the prefix's version (linearizable, keys only, limit 1): on a member without a
 * leader the read fails, which moves the client to another member; when the prefix moved past the
 * newest compile it asks for a compile; when the watch still owes a change the read showed after
 * `silenceMs`, it asks for the watch to be replaced. Each probe is one cheap read
 * ({@link readPrefixHead}); the prefix's newest revision (a read etcd 3.4 pays for with every value
 * under the prefix) is asked for only when etcd moved past what the watch covered and the watch
 * delivered nothing since the last probe: the only case in which it may be silent.
 */
export class WatchGuard {
  private timer: NodeJS.Timeout | null = null;
  private probing = false;
  private owedSince: number | null = null;
  private lastWatched: number | null = null;

  constructor(private readonly o: WatchGuardOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probe(), this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One probe (skipped while the previous one is in flight). */
  async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      const head = await readPrefixHead(this.o.client(), this.o.prefix);
      this.o.status.etcdOk();
      const watched = this.o.watched();
      const advanced = watched !== null && this.lastWatched !== null && watched > this.lastWatched;
      this.lastWatched = watched;
      // No watch (a re-list is under way), a watch that covered everything up to etcd's
      // revision, or one that delivered since the last probe: it owes nothing, or is alive.
      if (watched === null || head.revision <= watched || advanced) {
        this.owedSince = null;
        if (this.movedFromHead(head, watched)) this.o.onMoved();
        return;
      }
      const version = await readPrefixVersion(this.o.client(), this.o.prefix);
      this.judge(version);
    } catch (e) {
      this.o.status.etcdFailed(e);
      this.o.logger.debug({ err: e }, "watch probe failed");
    } finally {
      this.probing = false;
    }
  }

  /** Whether the cheap read (or the watch) shows the prefix past the newest compile. */
  private movedFromHead(head: PrefixHead, watched: number | null): boolean {
    const c = this.o.compiled();
    if (!c) return false;
    return (
      head.revision < c.revision ||
      head.clusterId !== c.clusterId ||
      head.count !== c.count ||
      (watched !== null && watched > c.revision)
    );
  }

  private judge(v: PrefixVersion): void {
    const c = this.o.compiled();
    if (
      c &&
      (v.revision < c.revision ||
        v.clusterId !== c.clusterId ||
        v.count !== c.count ||
        v.newestModRevision > c.newestModRevision)
    ) {
      this.o.onMoved();
    }
    const watched = this.o.watched();
    if (watched === null || v.newestModRevision <= watched || v.revision < watched) {
      this.owedSince = null;
      return;
    }
    const now = this.o.clock.now();
    this.owedSince ??= now;
    if (now - this.owedSince < this.o.silenceMs) return;
    this.owedSince = null;
    this.o.logger.warn(
      { owed_revision: v.newestModRevision, watched_revision: watched },
      "watch silent while the prefix moved; replacing it",
    );
    this.o.onSilent(v.newestModRevision);
  }
}
