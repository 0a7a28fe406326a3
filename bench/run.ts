import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { ownSignals } from "../adapters/own-signals.js";
import { LATENCY_WINDOW } from "../heartbeat/latency-window.js";
import { applyEtcdChoice, chooseEtcd, etcdVersionOf } from "../testkit/etcd-choice.js";
import { Cleanup } from "./lib/cleanup.js";
import { machineInfo } from "./lib/machine.js";
import { type BenchOptions, parseArgs } from "./lib/options.js";
import { renderTable, type TableInput } from "./lib/table.js";
import { burst } from "./sections/burst.js";
import { canaryRollback } from "./sections/canary.js";
import { checkerWrites } from "./sections/checker-writes.js";
import { cli } from "./sections/cli.js";
import { edgeCache } from "./sections/edge-cache.js";
import { failover } from "./sections/failover.js";
import { blackholeStall } from "./sections/failover-blackhole.js";
import { growth } from "./sections/growth.js";
import { propagation } from "./sections/propagation.js";
import { pusherScale } from "./sections/pusher-scale.js";
import { noisyWrites, shedShareError, slowToShed } from "./sections/slow-pools.js";
import { steering } from "./sections/steering.js";
import { uiRender } from "./sections/ui-render.js";
import { observeCost } from "./sections/viewers-observed.js";
import { weightedSplit } from "./sections/weighted-split.js";
import { workerBundle } from "./sections/worker-bundle.js";
import { workerMemory } from "./sections/worker-memory.js";
import { workerOverhead } from "./sections/worker-overhead.js";
import { writeEconomy } from "./sections/write-economy.js";

const RESULTS = fileURLToPath(new URL("./results.json", import.meta.url));

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

async function section<T>(
  name: string,
  opts: BenchOptions,
  fn: () => Promise<T>,
): Promise<T | null> {
  if (opts.only && !opts.only.includes(name)) return null;
  const started = Date.now();
  log(`▶ ${name}`);
  try {
    const r = await fn();
    log(`  ${name} done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return r;
  } catch (e) {
    log(`  ${name} FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return null;
  }
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = () => {
    if (interrupted) return;
    interrupted = true;
    log("interrupted: stopping everything the bench started");
    void cleanup.runAll().then(() => process.exit(130));
  };
  // Miniflare's own listener would exit before the cleanup is done.
  ownSignals(["SIGINT", "SIGTERM", "SIGHUP"], onSignal);

  const machine = machineInfo();
  const etcdChoice = chooseEtcd(opts.etcd ?? process.env.ETCD_BIN);
  applyEtcdChoice(process.env, etcdChoice);
  const etcd = { ...etcdChoice, version: etcdVersionOf(etcdChoice.bin) ?? "unknown" };
  const when = new Date().toISOString();
  const started = Date.now();
  log(
    `edge-router bench (${opts.quick ? "quick" : "full"}) on ${machine.cores}× ${machine.cpu}, node ${machine.node}, load ${machine.loadavg_start}, etcd ${etcd.version} (${etcd.bin})`,
  );

  const run = async <T>(name: string, fn: (c: Cleanup) => Promise<T>) =>
    section(name, opts, async () => {
      // Each section tears down what it started before the next one measures.
      const own = new Cleanup();
      const drop = cleanup.add(name, () => own.runAll());
      try {
        return await fn(own);
      } finally {
        await drop();
      }
    });

  const scale = opts.quick
    ? {
        changes: 100,
        edgeChanges: 30,
        burst: 1000,
        failoverRuns: 10,
        sustainSeconds: 20,
        rounds: 3,
        seconds: 4,
        flaps: 6,
        cliRuns: 11,
      }
    : {
        changes: 200,
        edgeChanges: 60,
        burst: 1000,
        failoverRuns: 20,
        sustainSeconds: 60,
        rounds: 5,
        seconds: 10,
        flaps: 12,
        cliRuns: 31,
      };

  const results = {
    when,
    quick: opts.quick,
    machine,
    pusher_scale: await run("scale", (c) =>
      pusherScale({ cleanup: c, log, sustainSeconds: scale.sustainSeconds, rate: 100 }),
    ),
    growth: await run("growth", (c) =>
      growth({
        cleanup: c,
        log,
        changes: opts.quick ? 8 : 20,
        // BENCH_GROWTH_SIZES=10000: only some sizes (memory experiments).
        ...(process.env.BENCH_GROWTH_SIZES
          ? { sizes: process.env.BENCH_GROWTH_SIZES.split(",").map(Number) }
          : {}),
      }),
    ),
    write_economy: await run("economy", (c) =>
      writeEconomy({ cleanup: c, log, transitions: scale.flaps }),
    ),
    worker: await run("worker", async (c) => {
      const overhead = await workerOverhead({
        cleanup: c,
        log,
        rounds: scale.rounds,
        seconds: scale.seconds,
        connections: 16,
      });
      // Its own workerd, once the throughput's is stopped.
      await c.runAll();
      const memory = await workerMemory({
        cleanup: c,
        log,
        requests: opts.quick ? 15_000 : 30_000,
        pairs: 3,
        connections: 16,
      });
      return { ...overhead, memory };
    }),
    observe: await run("observe", (c) =>
      observeCost({
        cleanup: c,
        log,
        rounds: scale.rounds,
        seconds: scale.seconds,
        connections: 16,
        requests: opts.quick ? 600 : 2000,
        loop: opts.quick ? { rounds: 20, iterations: 5000 } : { rounds: 60, iterations: 5000 },
      }),
    ),
    steer: await run("steer", (c) =>
      steering({
        cleanup: c,
        log,
        rounds: scale.rounds,
        seconds: scale.seconds,
        connections: 16,
        steadyS: opts.quick ? 60 : 300,
      }),
    ),
    bundle: await run("bundle", (c) => workerBundle({ cleanup: c, log })),
    weighted: await run("weighted", (c) =>
      weightedSplit({ cleanup: c, log, ...scale, connections: 16 }),
    ),
    cache: await run("cache", (c) =>
      edgeCache({
        cleanup: c,
        log,
        segments: opts.quick ? 20 : 50,
        pairs: opts.quick ? 200 : 1000,
      }),
    ),
    propagation: await run("propagation", (c) =>
      propagation({ cleanup: c, log, changes: scale.changes, edgeChanges: scale.edgeChanges }),
    ),
    burst: await run("burst", (c) => burst({ cleanup: c, log, changes: scale.burst })),
    failover: await run("failover", (c) =>
      failover({ cleanup: c, log, runs: scale.failoverRuns, ttlSeconds: 2 }),
    ),
    stall: await run("stall", (c) =>
      blackholeStall({
        cleanup: c,
        log,
        seconds: opts.quick ? 15 : 30,
        pacedRequests: opts.quick ? 60 : 120,
      }),
    ),
    health: await run("health", async (c) => ({
      checker: await checkerWrites({ cleanup: c, log, seconds: opts.quick ? 30 : 120 }),
      share: await shedShareError({ cleanup: c, log, viewers: 1000 }),
      slow: await slowToShed({ cleanup: c, log, fastSamples: opts.quick ? 4 : LATENCY_WINDOW }),
      noisy: await noisyWrites({ cleanup: c, log, seconds: opts.quick ? 120 : 600 }),
    })),
    canary: await run("canary", (c) =>
      canaryRollback({ cleanup: c, log, minSamples: opts.quick ? 100 : 200 }),
    ),
    ui: await run("ui", (c) => uiRender({ cleanup: c, log, loads: opts.quick ? 5 : 15 })),
    cli: await run("cli", (c) => cli({ cleanup: c, log, runs: scale.cliRuns })),
    duration_s: 0,
  };
  results.duration_s = Math.round((Date.now() - started) / 1000);
  results.machine.loadavg_end = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  await cleanup.runAll();

  const out: TableInput = {
    when: results.when,
    quick: results.quick,
    duration_s: results.duration_s,
    machine: results.machine,
    etcd,
    propagation_ms: results.propagation?.propagation_ms ?? null,
    edge_propagation_ms: results.propagation?.edge_propagation_ms ?? null,
    burst: results.burst,
    failover_ms:
      results.failover || results.stall
        ? {
            ...results.failover,
            ...(results.stall
              ? {
                  blackhole_stalled_share: results.stall.paced.stalled_share,
                  blackhole_stall: results.stall,
                }
              : {}),
          }
        : null,
    health: results.health
      ? {
          etcd_writes_per_checker_hour: results.health.checker.etcd_writes_per_checker_hour,
          checker_writes: results.health.checker,
          slow_to_shed_ms: results.health.slow.slow_to_shed_ms,
          slow_to_shed: results.health.slow,
          shed_share_error: results.health.share.shed_share_error,
          shed_share: results.health.share,
          kv_writes_per_hour_noisy: results.health.noisy.kv_writes_per_hour_noisy,
          noisy_writes: results.health.noisy,
        }
      : null,
    worker:
      results.worker || results.weighted || results.bundle
        ? { ...results.worker, ...results.weighted, ...results.bundle }
        : null,
    pusher_scale: results.pusher_scale,
    growth: results.growth,
    write_economy: results.write_economy,
    ui: results.ui,
    cli: results.cli,
    cache: results.cache,
    observe: results.observe,
    steer: results.steer,
    canary: results.canary,
  };
  writeFileSync(RESULTS, `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(renderTable(out));
  log(`results: ${RESULTS} (${results.duration_s} s)`);
}

await main();
