import type { Logger } from "pino";

/** What the trim reads and does; injected so that tests drive it with their own clock. */
export interface IdleHeapTrimDeps {
  /**
   * One memory-reducing full GC: V8's `gc({ type: "major", flavor: "last-resort" })`, which
   * compacts the heap and returns its free pages to the OS (a regular full GC keeps them pooled).
   */
  readonly collect: () => void;
  /** CPU time this process has used, in µs (`process.cpuUsage()`, user + system). */
  readonly cpuMicros: () => number;
  /**
   * The process's resident set in bytes (`process.memoryUsage.rss()`): what the trim gives back
   * includes V8's pooled pages, which the heap statistics do not count.
   */
  readonly rssBytes: () => number;
  /** Monotonic milliseconds. */
  readonly now: () => number;
  readonly logger?: Logger;
}

/** When a trim runs. */
export interface IdleHeapTrimOptions {
  /** How often the process's CPU time is sampled (default 250 ms). */
  readonly tickMs?: number;
  /** The window over which the process must have been quiet (default 1 s). */
  readonly quietMs?: number;
  /** Quiet: at most this share of one core over the whole window (default 3 %). */
  readonly quietCpuPct?: number;
  /** RSS growth since the last trim that makes another one worth it (default 4 MiB). */
  readonly minGrowthBytes?: number;
  /** At least this long between two trims (default 2 s)... */
  readonly minIntervalMs?: number;
  /**
   * ...and long enough that trims take at most this share of the time (default 1 %), a trim's
   * time being the lesser of its wall time and the process's CPU time over it.
   */
  readonly maxTimeShare?: number;
  /**
   * After `workDone`, the CPU window's trim waits this long without work (default 0): an owner
   * that reports its work gets its trims right after it, not just before its next piece.
   */
  readonly holdAfterWorkMs?: number;
}

/**
 * Hands the heap that work left behind back to the OS once the process goes quiet.
 *
 * The pusher:
 * Every full range read promotes its decoded entries to V8's old space, so after startup or a
 * burst of changes the heap holds ~15 MiB of free pages (fragmented pages and V8's page pool).
 * V8's own memory reducer returns them only once it sees a low allocation rate, and in this
 * process it keeps judging the rate high, idle or not (`--trace-memory-reducer`: "high alloc"),
 * so they stay resident. A memory-reducing GC once the last second used at most 3 % of a core
 * returns them (10,000 keys: RSS ~115 -> ~97 MiB, bench/README.md "Memory"). At 100 changes/s
 * the pusher uses ~13 % and no trim runs. Each trim is one compacting GC of 40-100 ms; the next
 * waits until trims have taken at most `maxTimeShare` of the time (1 %: ~5 s after a 50 ms one)
 * and until the RSS grew by `minGrowthBytes` again, so an idle pusher does not repeat it.
 *
 * An owner whose work comes in pieces (the pusher: a change, then its KV write) calls
 * `workDone` when a piece ended with nothing else waiting. A trim due then runs at once, whatever
 * the CPU window says, and the CPU window's trim waits `holdAfterWorkMs` after that: a trim stops
 * the process for its whole GC, and changes a second apart average under 3 % of a core, so on
 * the CPU window alone a trim often landed just before the next change and held it up
 * (bench/README.md "Memory"). Work that never pauses leaves the CPU window to decide, as for an
 * owner that reports nothing.
 *
 * A heartbeat: its live heap stays flat, but V8 keeps committing new pages to it, a few hundred
 * KiB at a time, and the memory reducer never returns them, so its RSS creeps up for as long as
 * it runs. The same trim returns them.
 */
export class IdleHeapTrim {
  private readonly tickMs: number;
  private readonly quietMs: number;
  private readonly quietCpuPct: number;
  private readonly minGrowthBytes: number;
  private readonly minIntervalMs: number;
  private readonly maxTimeShare: number;
  private readonly holdAfterWorkMs: number;
  /** When the owner last reported work done. */
  private lastWorkAt = Number.NEGATIVE_INFINITY;
  /** CPU-time samples covering the last `quietMs` (the oldest at or before the window start). */
  private samples: Array<{ at: number; cpu: number }> = [];
  /** When the next trim may run (after the last one's `minIntervalMs` and time share). */
  private nextAllowedAt = Number.NEGATIVE_INFINITY;
  /** RSS after the last trim; 0 before the first, so the startup heap is trimmed. */
  private rssAfterTrim = 0;
  private timer: NodeJS.Timeout | null = null;
  /** Trims run so far. */
  trims = 0;

  constructor(
    private readonly deps: IdleHeapTrimDeps,
    opts: IdleHeapTrimOptions = {},
  ) {
    this.tickMs = opts.tickMs ?? 250;
    this.quietMs = opts.quietMs ?? 1_000;
    this.quietCpuPct = opts.quietCpuPct ?? 3;
    this.minGrowthBytes = opts.minGrowthBytes ?? 4 * 1024 * 1024;
    this.minIntervalMs = opts.minIntervalMs ?? 2_000;
    this.maxTimeShare = opts.maxTimeShare ?? 0.01;
    this.holdAfterWorkMs = opts.holdAfterWorkMs ?? 0;
    this.restartWindow();
  }

  private restartWindow(): void {
    this.samples = [{ at: this.deps.now(), cpu: this.deps.cpuMicros() }];
  }

  /**
   * The owner finished a piece of work and nothing else waits: a trim that is due (the interval
   * and time share passed, the RSS grew enough) runs now. Call it outside the work's own stack.
   */
  workDone(): void {
    this.lastWorkAt = this.deps.now();
    if (this.trimIfDue(this.lastWorkAt)) this.restartWindow();
  }

  /** Samples the CPU time and trims when quiet long enough; the timer calls it every `tickMs`. */
  tick(): void {
    const now = this.deps.now();
    const cpu = this.deps.cpuMicros();
    this.samples.push({ at: now, cpu });
    while (this.samples.length > 2 && (this.samples[1]?.at ?? now) <= now - this.quietMs) {
      this.samples.shift();
    }
    const first = this.samples[0];
    if (!first || now - first.at < this.quietMs) return;
    if (now - this.lastWorkAt < this.holdAfterWorkMs) return;
    // Averaged over the window: a single short spike (a lease keepalive, a scrape) is not work.
    const pct = ((cpu - first.cpu) / 1000 / (now - first.at)) * 100;
    if (pct > this.quietCpuPct) return;
    // The GC's own CPU must not count as activity.
    if (this.trimIfDue(now)) this.restartWindow();
  }

  private trimIfDue(now: number): boolean {
    if (now < this.nextAllowedAt) return false;
    const before = this.deps.rssBytes();
    if (before - this.rssAfterTrim < this.minGrowthBytes) return false;
    const started = this.deps.now();
    const cpuBefore = this.deps.cpuMicros();
    this.deps.collect();
    const after = this.deps.rssBytes();
    this.trims++;
    this.rssAfterTrim = after;
    const done = this.deps.now();
    const ms = done - started;
    const cpuMs = (this.deps.cpuMicros() - cpuBefore) / 1000;
    // What the trim cost is the lesser of its wall time and the CPU it used: on a busy host the
    // GC spends most of its wall time waiting for a core, which would hold the next trim off 100
    // times that long while freed pages pile up; on an idle one its parallel helpers make its
    // CPU time the larger.
    const cost = Math.min(ms, cpuMs);
    this.nextAllowedAt = done + Math.max(this.minIntervalMs, cost / this.maxTimeShare);
    const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
    this.deps.logger?.debug(
      {
        rss_mb_before: mib(before),
        rss_mb_after: mib(after),
        ms: Math.round(ms),
        cpu_ms: Math.round(cpuMs),
      },
      "idle heap trim",
    );
    return true;
  }

  /** Starts sampling (the timer does not keep the process alive). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * Starts an {@link IdleHeapTrim} of this process. Needs V8's `gc`, which the systemd units
 * expose (`--expose-gc` in their `NODE_OPTIONS`); without it the process runs without the trim
 * and `null` is returned.
 */
export function startIdleHeapTrim(
  logger: Logger,
  opts: IdleHeapTrimOptions = {},
): IdleHeapTrim | null {
  const gc = globalThis.gc;
  if (!gc) {
    logger.debug("V8's gc not exposed (no --expose-gc in NODE_OPTIONS): no idle heap trim");
    return null;
  }
  const trim = new IdleHeapTrim(
    {
      collect: () => gc({ type: "major", flavor: "last-resort" }),
      cpuMicros: () => {
        const u = process.cpuUsage();
        return u.user + u.system;
      },
      rssBytes: () => process.memoryUsage.rss(),
      now: () => performance.now(),
      logger,
    },
    opts,
  );
  trim.start();
  return trim;
}
