import { KvError } from "../adapters/kv/kv-sink.js";
import { isAfter } from "../core/contract/map-order.js";
import {
  type CompiledMap,
  type CompileResult,
  META_KEY,
  parseMap,
  ROUTES_KEY,
} from "../core/index.js";
import { checkKvRoutes } from "./anti-entropy.js";
import { sleep } from "./clock.js";
import { fencedPut, pushEntries } from "./kv-entries.js";
import { kvRetryDelay } from "./kv-retry.js";
import { KV_STALE_READ_MS, KvView } from "./kv-view.js";
import { pushLogFields } from "./push-log.js";
import type { WriteSchedulerOptions } from "./write-scheduler-options.js";
import { WriteSlots } from "./write-slots.js";

/**
 * Writes the newest compiled map to KV: `routes` when it routes differently from the map KV
 * holds, `meta` when the revision it confirms changes (`KvView`); one write per `minIntervalMs`
 * per key at most (`WriteSlots`): a change after a quiet interval goes out at once, later ones are coalesced into
 * one write at the interval's end, and a failed write is retried with backoff. The desired state is read when a write starts,
 * so the last state always wins and a newer map supersedes a pending one.
 */
export class WriteScheduler {
  private readonly view: KvView;
  private metaWrittenAt = Number.NEGATIVE_INFINITY;
  private readonly slots: WriteSlots;
  private retryAt = 0;
  private attempts = 0;
  private active = false;
  private needLoad = false;
  /** Bumped by `activate()`: a read started for an earlier activation does not satisfy it. */
  private activation = 0;
  private reconcileRequested = false;
  /** A stale read's recheck: the requested check waits until then. */
  private reconcileAt = Number.NEGATIVE_INFINITY;
  private writing = false;
  private stopped = false;
  private waker = new AbortController();
  /** Set by `wake()`; a wake-up during a tick must not be lost to the following sleep. */
  private woken = false;
  private loop: Promise<void> | null = null;
  /** The KV map last reported through `onKvAhead`. */
  private aheadSeen: CompiledMap | null = null;

  constructor(private readonly o: WriteSchedulerOptions) {
    this.view = new KvView(o.pusherId);
    this.slots = new WriteSlots(o.minIntervalMs);
  }

  /** Starts the write loop. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Offers a freshly compiled map; it replaces any older one not yet written. */
  submit(result: CompileResult): void {
    this.view.desired = result;
    this.view.awaitingCompile = false;
    this.wake();
  }

  /** Becomes the writer: re-reads KV first, then writes what differs. */
  activate(): void {
    this.active = true;
    this.activation += 1;
    this.reconcileAt = Number.NEGATIVE_INFINITY;
    this.needLoad = true;
    this.view.awaitingCompile = true;
    this.view.forgetMeta();
    this.wake();
  }

  /** Stops writing (leadership lost); a write already in flight cannot be recalled. */
  deactivate(): void {
    this.active = false;
    this.wake();
  }

  /** Counts and reports a move to a new etcd history; KV is rewritten by the next compile. */
  historyChanged(message: string): void {
    this.o.metrics.historyResets.inc();
    this.o.status.recordError("etcd", new Error(message));
    this.view.forgetMeta();
    this.wake();
  }

  /** Asks for an anti-entropy check of KV against the newest compile. */
  requestReconcile(): void {
    this.reconcileRequested = true;
    this.wake();
  }

  /** True while a change or a changed `meta` waits to be written. */
  hasPending(): boolean {
    if (this.writing) return true;
    if (!this.active) return false;
    return this.view.routesDue() !== null || this.view.metaChanged();
  }

  /** True while the newest compile's `routes` differs from what KV holds (a write is due). */
  routesPending(): boolean {
    return this.view.routesDue() !== null;
  }

  /** When a new map could be written (a compile waits for it): +∞ while writing, −∞ standby. */
  nextWriteAt(): number {
    if (!this.active || this.stopped) return Number.NEGATIVE_INFINITY;
    if (this.writing) return Number.POSITIVE_INFINITY;
    return Math.max(this.slots.routesFreeAt(), this.retryAt);
  }

  /** Waits until nothing is pending, or `timeoutMs` passes; resolves to whether it drained. */
  async flush(timeoutMs: number): Promise<boolean> {
    const deadline = this.o.clock.now() + timeoutMs;
    while (this.hasPending()) {
      if (this.o.clock.now() >= deadline) return false;
      await sleep(20);
    }
    return true;
  }

  /** Ends the loop after the current write. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  private wake(): void {
    this.woken = true;
    this.waker.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let delay: number;
      this.woken = false;
      try {
        delay = await this.tick();
      } catch (e) {
        this.o.logger.error({ err: e }, "write loop error");
        delay = 1_000;
      }
      if (delay > 0 && !this.stopped && !this.woken) {
        this.waker = new AbortController();
        await sleep(Math.min(delay, 2 ** 31 - 1), this.waker.signal);
      }
    }
  }

  /** Does at most one KV call; returns how long to wait before looking again. */
  private async tick(): Promise<number> {
    if (!this.active) return Number.POSITIVE_INFINITY;
    if (!this.o.canWrite()) return 100;
    const now = this.o.clock.now();
    if (now < this.retryAt) return this.retryAt - now;
    if (this.needLoad) return this.load();
    if (this.view.awaitingCompile || !this.view.desired) return Number.POSITIVE_INFINITY;

    const routes = this.view.routesDue();
    const metaSource = this.view.metaSource();
    const kvAhead = this.view.written;
    if (
      !routes &&
      kvAhead &&
      isAfter(kvAhead, this.view.desired.map) &&
      this.aheadSeen !== kvAhead
    ) {
      this.aheadSeen = kvAhead;
      this.o.onKvAhead?.(kvAhead);
    }
    const heartbeatDue = this.metaWrittenAt + this.o.heartbeatMs;
    const metaDue = metaSource !== null && (this.view.metaChanged() || now >= heartbeatDue);
    if (!routes && !metaDue) {
      if (this.reconcileRequested && now >= this.reconcileAt) return this.reconcile();
      const nextCheck = this.reconcileRequested ? this.reconcileAt : Number.POSITIVE_INFINITY;
      return Math.min(nextCheck, metaSource ? heartbeatDue : Number.POSITIVE_INFINITY) - now;
    }
    const slot = this.slots.plan(now, routes !== null);
    if (slot.waitMs > 0) return slot.waitMs;
    if (metaSource) await this.write(routes, metaSource, slot.withMeta);
    return 0;
  }

  private async load(): Promise<number> {
    const activation = this.activation;
    try {
      const text = await this.o.kv.get(ROUTES_KEY);
      const map = text === null ? null : parseMap(text);
      if (text !== null && !map) this.o.logger.warn("KV routes is not a valid map; rewriting it");
      this.view.learned(map, this.o.clock.now());
      // Activated again during the read: the next tick reads again for that activation.
      if (activation !== this.activation) return 0;
      this.needLoad = false;
      this.attempts = 0;
      this.o.status.kvOk();
      if (map && map.history === this.o.status.history) this.o.status.observeRevision(map.rev);
      // A compile that landed during the read lacks the last valid rules it brings: when the
      // caller compiles again from them, only that compile may be written.
      const awaiting = this.view.awaitingCompile;
      this.view.awaitingCompile = true;
      if (!this.o.onLoaded(map)) this.view.awaitingCompile = awaiting;
      return 0;
    } catch (e) {
      return this.failed("read", e);
    }
  }

  /** One anti-entropy check (`checkKvRoutes`); a stale read is checked again after the window. */
  private async reconcile(): Promise<number> {
    const out = await checkKvRoutes(this.o, this.view, this.o.staleReadMs ?? KV_STALE_READ_MS);
    if (out.kind === "failed") return this.failed("read", out.error);
    if (out.kind === "stale") {
      this.reconcileAt = out.recheckAt;
      return 0;
    }
    this.reconcileRequested = false;
    return 0;
  }

  private async write(
    routes: CompiledMap | null,
    metaSource: CompiledMap,
    withMeta: boolean,
  ): Promise<void> {
    const started = this.o.clock.now();
    const all = pushEntries(routes, metaSource, this.o.pusherId, started);
    const entries = withMeta ? all : all.filter((e) => e.key !== META_KEY);
    this.slots.took(started, { routes: routes !== null, meta: withMeta });
    this.writing = true;
    const stopTimer = this.o.metrics.writeDuration.startTimer();
    try {
      await fencedPut(this.o.kv, entries, this.o.writeDeadline() - started);
    } catch (e) {
      stopTimer();
      this.writing = false;
      this.failed("write", e);
      this.o.onWriteSettled?.();
      return;
    }
    stopTimer();
    this.writing = false;
    this.o.onWriteSettled?.();
    this.attempts = 0;
    this.o.status.kvOk();
    this.o.metrics.pushes.inc();
    if (routes) this.view.learned(routes, this.o.clock.now());
    if (withMeta) {
      this.view.metaWritten(metaSource);
      this.metaWrittenAt = started;
    }
    const m = metaSource;
    this.o.status.pushed(
      m.rev,
      m.epoch,
      Object.keys(m.countries).length,
      m.problems,
      m.history,
      this.view.written?.rev ?? null,
    );
    this.o.logger.info(
      pushLogFields(m, entries, this.o.clock.now() - started),
      routes === null ? "heartbeat" : "push",
    );
  }

  private failed(op: string, e: unknown): number {
    this.attempts += 1;
    const { delayMs: delay, retryable } = kvRetryDelay(e, this.attempts, this.o.backoff);
    this.retryAt = this.o.clock.now() + delay;
    this.o.status.kvFailed(e);
    // A read of `routes` fails the push it starts or checks: a refused token fails the first
    // read, before any write, and must count as well.
    this.o.metrics.pushErrors.inc();
    this.o.logger[retryable ? "warn" : "error"](
      {
        op,
        attempt: this.attempts,
        retry_in_ms: delay,
        code: e instanceof KvError ? e.code : undefined,
        err: this.o.status.scrub(e instanceof Error ? `${e.name}: ${e.message}` : String(e)),
      },
      `KV ${op} failed`,
    );
    return delay;
  }
}
