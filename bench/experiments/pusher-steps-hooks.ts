// Diagnostics entry: the pusher's own main (from source, under tsx) with timestamps at each step
// of a propagation, appended to the file named by PROBE_OUT as `step epochMs detail` lines
// (epoch ms from performance.timeOrigin + performance.now(), comparable across processes).
// bench/experiments/pusher-steps.ts starts it through the bench's stack (BENCH_PUSHER_ENTRY); nothing else uses it.
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { Watcher } from "etcd3";
import type { KvEntry, KvSink } from "../../adapters/kv/kv-sink.js";
import { LOCAL_PUT_GAP_MS } from "../../adapters/kv/local-sink.js";
import { RoutingIndex } from "../../core/incremental/routing-index.js";
import { sleep } from "../../pusher/clock.js";
import { CompileLoop } from "../../pusher/compile-loop.js";
import { ExpiryTimer } from "../../pusher/expiry-timer.js";
import { PrefixMirror } from "../../pusher/prefix-mirror.js";
import { RoutingView } from "../../pusher/ui/routing-view.js";
import { WriteScheduler } from "../../pusher/write-scheduler.js";

const out = process.env.PROBE_OUT ?? "";
const lines: string[] = [];
const at = () => (performance.timeOrigin + performance.now()).toFixed(3);
const mark = (step: string, detail = "") => {
  lines.push(`${step} ${at()} ${detail}`);
  if (lines.length >= 20) flush();
};
const flush = () => {
  if (out && lines.length) appendFileSync(out, `${lines.join("\n")}\n`);
  lines.length = 0;
};
setInterval(flush, 500).unref();
process.on("exit", flush);

// Every GC pause, marked at its start with its kind and duration.
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0;
    lines.push(
      `gc ${(performance.timeOrigin + e.startTime).toFixed(3)} ${kind}:${e.duration.toFixed(2)}`,
    );
  }
}).observe({ entryTypes: ["gc"] });

type Method = (this: unknown, ...args: unknown[]) => unknown;
/** Wraps `proto[name]`, marking before (and, for a promise, after) each call. */
function wrap(proto: object, name: string, step: string, after = false): void {
  const table = proto as Record<string, Method>;
  const inner = table[name];
  if (typeof inner !== "function") throw new Error(`probe: no method ${name}`);
  table[name] = function (this: unknown, ...args: unknown[]) {
    mark(`${step}:start`);
    const r = inner.apply(this, args);
    if (after && r instanceof Promise) void r.then(() => mark(`${step}:end`));
    return r;
  };
}

const emit = Watcher.prototype.emit;
Watcher.prototype.emit = function (this: Watcher, event: string | symbol, ...args: unknown[]) {
  if (event === "data") {
    const res = args[0] as { events?: Array<{ kv: { mod_revision: string } }> };
    mark("watch:data", res.events?.map((e) => e.kv.mod_revision).join(",") ?? "");
  }
  return emit.call(this, event, ...args);
};
wrap(CompileLoop.prototype, "trigger", "trigger");
wrap(CompileLoop.prototype, "read", "read", true);
wrap(CompileLoop.prototype, "once", "once", true);
wrap(PrefixMirror.prototype, "applyDelta", "apply");
wrap(RoutingIndex.prototype, "state", "state");
wrap(RoutingView.prototype, "update", "compiled");
wrap(ExpiryTimer.prototype, "arm", "arm");
wrap(WriteScheduler.prototype, "submit", "submit");
wrap(WriteScheduler.prototype, "tick", "tick", true);

// The sink: one put per entry, as the local sink does, each timed.
const wrapped = new WeakSet<KvSink>();
const write = (WriteScheduler.prototype as unknown as Record<string, Method>).write;
if (!write) throw new Error("probe: no method write");
(WriteScheduler.prototype as unknown as Record<string, Method>).write = function (
  this: unknown,
  ...args: unknown[]
) {
  const kv = (this as { o: { kv: KvSink } }).o.kv;
  if (!wrapped.has(kv)) {
    wrapped.add(kv);
    const putMany = kv.putMany.bind(kv);
    (kv as { putMany: KvSink["putMany"] }).putMany = async (entries: readonly KvEntry[], o) => {
      for (const [i, e] of entries.entries()) {
        // The pause the local sink makes between the puts of one putMany.
        if (i > 0 && kv.kind === "local") await sleep(LOCAL_PUT_GAP_MS);
        mark("put:start", `${e.key}:${e.value.length}`);
        await putMany([e], o);
        mark("put:end", e.key);
      }
    };
  }
  mark("write:start");
  const r = write.apply(this, args) as Promise<void>;
  return r.then(() => mark("write:end"));
};

// PROBE_QUIET_READS=1: the same delta read on the pusher's own client every 333 ms, marked
// `quietread <ms>`, to compare with the read a change makes.
if (process.env.PROBE_QUIET_READS) {
  const read = PrefixMirror.prototype.read;
  let mirror: { client: unknown; prefix: string } | null = null;
  PrefixMirror.prototype.read = function (this: PrefixMirror, ...args) {
    mirror ??= this as unknown as { client: unknown; prefix: string };
    return read.apply(this, args);
  };
  const { readPrefixDelta } = await import("../../pusher/prefix-version.js");
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  process.on("exit", () =>
    appendFileSync(
      out,
      `looplag ${at()} ${(lag.percentile(50) / 1e6).toFixed(3)}/${(lag.percentile(99) / 1e6).toFixed(3)}\n`,
    ),
  );
  setInterval(async () => {
    if (!mirror) return;
    const t0 = performance.now();
    await readPrefixDelta(mirror.client as never, mirror.prefix, 1 << 30, 1_000);
    lines.push(`quietread ${at()} ${(performance.now() - t0).toFixed(3)}`);
  }, 333).unref();
}

await import("../../pusher/main.js");
