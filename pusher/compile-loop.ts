import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import type { PrefixVersion } from "../adapters/prefix-read.js";
import {
  type CarriedState,
  type CompileResult,
  carriedState,
  compileState,
  DEFAULT_ROUTES_BUDGET_BYTES,
  RouteMemo,
} from "../core/index.js";
import { backoffDelay } from "./backoff.js";
import { type Clock, sleep } from "./clock.js";
import { CompileGate } from "./compile-gate.js";
import type { HistoryChange, HistoryTracker } from "./history-tracker.js";
import type { ObservedMap } from "./observed-map.js";
import { type MirrorRead, PrefixMirror, type PrefixMirrorOptions } from "./prefix-mirror.js";
import type { PusherStatus } from "./status.js";

/** What compiling needs besides the snapshot. */
export interface CompileLoopOptions {
  readonly client: Etcd3;
  readonly prefix: string;
  readonly floorPool: string;
  readonly originTemplate: string;
  /** `SHED_RECOVER_SECONDS`; the core's default when absent. */
  readonly shedRecoverSeconds?: number | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly status: PusherStatus;
  /** Which etcd history reads belong to; compiles are stamped with it. */
  readonly history: HistoryTracker;
  /** `compileMs`: how long the core compile took (the `edge_pusher_compile_seconds` histogram). */
  readonly onCompiled: (result: CompileResult, compileMs: number) => void;
  /**
   * The KV write slot (1 s): `trigger` starts at most one read per slot; `compileNow` does not
   * wait for it. 0 turns the economy off.
   */
  readonly minIntervalMs: number;
  /** When the KV writer could next write (`WriteScheduler.nextWriteAt`); default: any time. */
  readonly writableAt?: () => number;
  /**
   * Whether the newest compile left a `routes` write due (`WriteScheduler.routesPending`): a
   * compile that left none gives its read slot back (`CompileGate.refund`). Default: always due.
   */
  readonly routesDue?: () => boolean;
  /** Told of every read of the prefix, delta or full (for the range-read metrics). */
  readonly onRead?: (read: MirrorRead, durationMs: number) => void;
  /** Tuning of the delta reads (tests make them small). */
  readonly mirror?: PrefixMirrorOptions;
  /** A confirmed new etcd history (restored or replaced), before its first compile. */
  readonly onNewHistory?: (change: HistoryChange, revision: number) => void;
}

/**
 * Reads the prefix at one revision (a {@link PrefixMirror}: only what changed, proven complete)
 * and compiles it. Triggers are coalesced and throttled by
 * a {@link CompileGate}: the first after a quiet slot reads at once, later ones wait for the
 * slot's end and share one read there, so a burst of watch events costs one read per KV write
 * slot, not one per event; `compileNow` (re-list, resync, shutdown) skips the wait. A failed read is retried with backoff until it succeeds. A read that does not fit the
 * current etcd history (a lower revision, another cluster id) is checked with a second, fresh read;
 * if that one agrees, the pusher follows the new history instead of freezing on the old one.
 */
export class CompileLoop {
  /** The last compiled map: countries whose rule turns invalid route by the last valid rule it keeps. */
  /** What the next compile carries forward: its own last compile, or the takeover seed. */
  private carried: CarriedState | null = null;
  private dirty = false;
  private running: Promise<number> | null = null;
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly gate: CompileGate;
  /** Set by `compileNow`: the next read does not wait for the slot. */
  private urgent = false;
  /** Set by `compileNow({ full: true })`: the next read reads every key. */
  private wantFull = false;
  private waker = new AbortController();
  private lastRevision = 0;
  private lastVersion: PrefixVersion | null = null;
  private readonly mirror: PrefixMirror;
  private readonly routeMemo = new RouteMemo();
  /** Bumped by `setCarried`, so a compile started before it is discarded, not published. */
  private generation = 0;

  constructor(private readonly o: CompileLoopOptions) {
    this.gate = new CompileGate(o.minIntervalMs);
    this.mirror = new PrefixMirror(o.client, o.prefix, o.mirror);
  }

  /** A delete event of the watch (see {@link PrefixMirror.noteDeleted}). */
  noteDeleted(key: string, revision: number): void {
    this.mirror.noteDeleted(key, revision);
  }

  /** Sets what the next compile carries (on taking over: its own compile merged with KV's map). */
  setCarried(carried: CarriedState | null): void {
    if (!carried) return;
    this.carried = carried;
    this.generation += 1;
  }

  /** The `observed/` values of the newest read: what viewers get (docs/reference.md §12). */
  get observed(): ObservedMap {
    return this.mirror.observed;
  }

  /** The version of the prefix the newest compile read (`null` before the first). */
  get compiledVersion(): PrefixVersion | null {
    return this.lastVersion;
  }

  /** True when no read is under way or waiting for its slot. */
  get idle(): boolean {
    return this.running === null && !this.dirty;
  }

  /** Asks for a compile of the current etcd state, within the compile economy. */
  trigger(): void {
    this.dirty = true;
    this.running ??= this.drain();
  }

  /**
   * A trigger from a look at etcd taken while a read may be under way (the watch guard): ignored
   * when a read is pending or in flight, since that read sees at least as much; a guard that saw
   * more after it asks again a probe later. Otherwise each probe that races a read would cost
   * one more read, and the slot it takes would delay the next change.
   */
  nudge(): void {
    if (!this.running) this.trigger();
  }

  /**
   * Compiles now (after any in-flight read) and resolves to the revision read; `full` reads
   * every key of the prefix (the periodic reconcile), not only what changed.
   */
  async compileNow(opts: { readonly full?: boolean } = {}): Promise<number> {
    this.urgent = true;
    if (opts.full) this.wantFull = true;
    this.waker.abort();
    this.trigger();
    for (;;) {
      const running = this.running;
      if (!running) return this.lastRevision;
      await running;
      if (!this.dirty || this.stopped) return this.lastRevision;
    }
  }

  /** The writer's next slot moved (a write settled): a waiting read looks at it again. */
  wake(): void {
    this.waker.abort();
  }

  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.waker.abort();
  }

  private async drain(): Promise<number> {
    let failures = 0;
    try {
      while (this.dirty && !this.stopped) {
        const wait = this.urgent ? 0 : this.gate.waitMs(this.o.clock.now(), this.o.writableAt?.());
        if (wait > 0) {
          // Triggers arriving meanwhile only set `dirty`: the read at the slot's end takes them.
          this.waker = new AbortController();
          await sleep(Math.min(wait, 2 ** 31 - 1), this.waker.signal);
          continue;
        }
        const urgent = this.urgent;
        this.gate.started(this.o.clock.now(), !urgent);
        this.urgent = false;
        this.dirty = false;
        try {
          await this.once();
          if (!urgent && this.o.routesDue?.() === false) this.gate.refund();
          this.gate.finished(this.o.clock.now());
          failures = 0;
        } catch (e) {
          failures += 1;
          this.dirty = true;
          // A re-list's retry waits for its backoff only, not for the writer's slot.
          this.urgent ||= urgent;
          this.gate.failed();
          this.o.status.etcdFailed(e);
          // Capped at 1 s: a range read that fails fast costs little, and the next one that works
          // is how the pusher learns etcd is back (the watch was dropped with the connection).
          const delay = backoffDelay(failures, { baseMs: 200, maxMs: 1_000 });
          // One line at the start of an outage, then one a minute or so: not one per retry.
          if (failures === 1 || failures % 60 === 0)
            this.o.logger.warn(
              { err: e, attempt: failures, retry_in_ms: delay },
              "etcd read failed",
            );
          await sleep(delay, this.abort.signal);
        }
      }
    } finally {
      this.running = null;
    }
    return this.lastRevision;
  }

  private async read(full: boolean): Promise<MirrorRead> {
    const started = performance.now();
    const read = await this.mirror.read(full);
    this.o.onRead?.(read, performance.now() - started);
    return read;
  }

  private async once(): Promise<void> {
    const generation = this.generation;
    const { prefix, history } = this.o;
    const full = this.wantFull;
    this.wantFull = false;
    let read: MirrorRead;
    try {
      read = await this.read(full);
    } catch (e) {
      this.wantFull ||= full;
      throw e;
    }
    this.o.status.etcdOk();
    let change: HistoryChange | null = null;
    if (history.suspect(read)) {
      // One read that goes back proves little on its own; a second, fresh one decides.
      read = await this.read(true);
      change = history.record(read, true);
    } else {
      history.record(read, false);
    }
    if (change) this.o.onNewHistory?.(change, read.revision);
    if (generation !== this.generation) {
      this.dirty = true;
      return;
    }
    this.lastRevision = read.revision;
    this.lastVersion = read;
    this.o.status.observeRevision(read.revision);
    const compileStarted = performance.now();
    const result = compileState(this.mirror.index.state(), read.revision, {
      prefix,
      floorPool: this.o.floorPool,
      originTemplate: this.o.originTemplate,
      now: new Date(this.o.clock.now()),
      carried: this.carried,
      routesBudgetBytes: DEFAULT_ROUTES_BUDGET_BYTES,
      history: history.history,
      routeMemo: this.routeMemo,
      ...(this.o.shedRecoverSeconds !== undefined
        ? { shedRecoverSeconds: this.o.shedRecoverSeconds }
        : {}),
    });
    this.carried = carriedState({ own: result.map });
    this.o.onCompiled(result, performance.now() - compileStarted);
  }
}
