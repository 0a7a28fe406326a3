import { constants, type PerformanceEntry, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
import { Gauge, type Registry } from "prom-client";

/** Whether a `gc` performance entry is a full (mark-compact) collection. */
function isFullCollection(entry: PerformanceEntry): boolean {
  // Node's `gc` entries carry `detail.kind` (NodeGCPerformanceDetail); the entry type omits it.
  const { detail } = entry as { detail?: { kind?: number } | null };
  return detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
}

/**
 * V8's heap used right after its latest full collection: the live heap, what a leak grows.
 * The heap used between collections saws with garbage (a heartbeat's by ~2 MiB, a busy pusher's
 * by ~6 MiB), so only this one shows a slow leak within an hour. Read two event-loop turns after
 * the collection (when Node hands its `gc` entry to observers): what ran in between is counted.
 */
export class LiveHeap {
  private readonly observer: PerformanceObserver;
  private last: number | null = null;
  /** Full collections seen since the start. */
  collections = 0;

  constructor(heapUsed: () => number = () => getHeapStatistics().used_heap_size) {
    this.observer = new PerformanceObserver((list) => {
      if (!list.getEntries().some(isFullCollection)) return;
      this.collections++;
      this.last = heapUsed();
    });
    this.observer.observe({ entryTypes: ["gc"] });
  }

  /** Bytes after the latest full collection; null before the first. */
  bytes(): number | null {
    return this.last;
  }

  stop(): void {
    this.observer.disconnect();
  }
}

/** The process's one {@link LiveHeap}, made by the first gauge that needs it. */
let processLiveHeap: LiveHeap | null = null;

/**
 * Registers `<prefix>_heap_live_bytes` in `registry`: the process's {@link LiveHeap}, 0 before
 * its first full collection. Every registry shares one observer, which lives as long as the
 * process.
 */
export function registerLiveHeapGauge(registry: Registry, prefix: string): void {
  processLiveHeap ??= new LiveHeap();
  const live = processLiveHeap;
  new Gauge({
    name: `${prefix}_heap_live_bytes`,
    help: "V8 heap used right after the latest full (mark-compact) collection: the live heap; 0 before the first",
    registers: [registry],
    collect() {
      this.set(live.bytes() ?? 0);
    },
  });
}
