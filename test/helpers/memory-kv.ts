import { setTimeout as sleep } from "node:timers/promises";
import { type KvEntry, KvError, type KvSink, type PutOptions } from "../../adapters/kv/kv-sink.js";

/** One recorded `putMany` entry. */
export interface MemoryKvWrite {
  readonly at: number;
  readonly key: string;
  readonly value: string;
}

/**
 * An in-memory KvSink for loop tests: records every write with its start time, and can be told
 * to fail the next writes (or all until told otherwise) with a given KvError.
 */
export class MemoryKv implements KvSink {
  readonly kind = "local" as const;
  readonly data = new Map<string, string>();
  readonly writes: MemoryKvWrite[] = [];
  /** Every `get`, with its key and start time. */
  readonly reads: { at: number; key: string }[] = [];
  /** Every failed attempt, with its start time. */
  readonly failures: { at: number; keys: string[] }[] = [];
  private failing: { error: () => KvError; remaining: number } | null = null;
  private failReads = false;
  /** Artificial latency of each call, in ms. */
  latencyMs = 0;

  /** Fails the next `count` writes (Infinity: until `heal()`). */
  failWrites(
    count: number,
    error: () => KvError = () => new KvError("server-error", "boom"),
  ): void {
    this.failing = { error, remaining: count };
  }

  /** Fails reads until `heal()`. */
  failAllReads(): void {
    this.failReads = true;
  }

  heal(): void {
    this.failing = null;
    this.failReads = false;
  }

  async get(key: string): Promise<string | null> {
    this.reads.push({ at: Date.now(), key });
    if (this.latencyMs) await sleep(this.latencyMs);
    if (this.failReads) throw new KvError("network", "read failed");
    return this.data.get(key) ?? null;
  }

  async putMany(entries: readonly KvEntry[], options: PutOptions = {}): Promise<void> {
    const at = Date.now();
    if (this.latencyMs) await sleep(this.latencyMs);
    if (options.signal?.aborted) {
      this.failures.push({ at, keys: entries.map((e) => e.key) });
      throw new KvError("timeout", "write deadline passed");
    }
    if (this.failing && this.failing.remaining > 0) {
      this.failing.remaining -= 1;
      this.failures.push({ at, keys: entries.map((e) => e.key) });
      throw this.failing.error();
    }
    for (const e of entries) {
      this.data.set(e.key, e.value);
      this.writes.push({ at, key: e.key, value: e.value });
    }
  }

  /** Writes to one key, oldest first. */
  writesOf(key: string): MemoryKvWrite[] {
    return this.writes.filter((w) => w.key === key);
  }

  /** Parsed JSON of a key, or null. */
  json<T>(key: string): T | null {
    const v = this.data.get(key);
    return v === undefined ? null : (JSON.parse(v) as T);
  }

  async close(): Promise<void> {}
}
