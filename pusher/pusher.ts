import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import type { KvSink } from "../adapters/kv/kv-sink.js";
import { nextOverrideExpiry } from "../core/override-expiry.js";
import type { BackoffPolicy } from "./backoff.js";
import { type Clock, sleep } from "./clock.js";
import { CompileLoop } from "./compile-loop.js";
import type { PusherConfig } from "./config.js";
import { ExpiryTimer } from "./expiry-timer.js";
import { HistoryTracker } from "./history.js";
import { HistoryFollower } from "./history-follower.js";
import { Leadership } from "./leadership.js";
import { createMetrics, type PusherMetrics } from "./metrics.js";
import { PusherStatus } from "./status.js";
import { RoutingView } from "./ui/routing-view.js";
import { WatchGuard } from "./watch-guard.js";
import { WatchTrigger } from "./watch-trigger.js";
import { WriteScheduler } from "./write-scheduler.js";

/** The parts of the configuration the loop uses (see `PusherConfig`). */
export type PusherLoopConfig = Pick<
  PusherConfig,
  | "prefix"
  | "originTemplate"
  | "floorPool"
  | "heartbeatSeconds"
  | "resyncSeconds"
  | "electionKey"
  | "electionTtl"
  | "pusherId"
>;

/** Internal knobs, shortened by tests. */
export interface PusherTuning {
  /** Minimum spacing of writes to one KV key (Workers KV: 1 s). */
  readonly minWriteIntervalMs?: number;
  readonly kvBackoff?: BackoffPolicy;
  /** `/readyz` fails when etcd is unreachable or KV failing for longer than this (30 s). */
  readonly unhealthyAfterMs?: number;
  /** How often the watch guard reads the prefix's version (1 s). */
  readonly probeIntervalMs?: number;
  /** How long the watch may owe a change before it is replaced (2 s). */
  readonly watchSilenceMs?: number;
  /** Strings never to show in `/status` (e.g. the API token). */
  readonly secrets?: readonly string[];
}

/** Dependencies of the pusher, passed explicitly. */
export interface PusherDeps {
  readonly etcd: Etcd3;
  /**
   * Opens the client the watch and its probe use; a silent watch is moved by closing it and
   * opening another. Without it the watch shares `etcd` and is only re-created on it.
   */
  readonly openWatchClient?: () => Etcd3;
  readonly kv: KvSink;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly config: PusherLoopConfig;
  readonly tuning?: PusherTuning;
}

/** A running pusher. */
export interface Pusher {
  readonly status: PusherStatus;
  readonly metrics: PusherMetrics;
  /** The last compiled map, for `/ui`. */
  readonly routing: RoutingView;
  /** Campaigns, reads, watches and writes until stopped. */
  start(): void;
  /** Graceful stop: stop watching, flush (bounded), resign. Does not close etcd or KV. */
  stop(opts?: { readonly flushTimeoutMs?: number }): Promise<void>;
  /** Stops without flushing or resigning, as a crash would (tests). */
  abandon(): Promise<void>;
  /** Forces a full reconcile with KV now (what the RESYNC_SECONDS timer does). */
  resync(): void;
}

/**
 * Wires the loop: leadership → (list, then watch as a trigger) → compile → throttled KV writes.
 * Standbys keep compiling so their status is current and a takeover starts from fresh state.
 */
export function createPusher(deps: PusherDeps): Pusher {
  const { etcd, kv, logger, clock, config } = deps;
  const tuning = deps.tuning ?? {};
  const minWriteIntervalMs = tuning.minWriteIntervalMs ?? 1_000;
  const status = new PusherStatus(
    config.pusherId,
    clock,
    tuning.secrets ?? [],
    tuning.unhealthyAfterMs ?? 30_000,
  );
  const metrics = createMetrics(status);
  const routing = new RoutingView(config.floorPool);
  const leadership = new Leadership({
    client: etcd,
    key: config.electionKey,
    ttlSeconds: config.electionTtl,
    id: config.pusherId,
    clock,
    logger,
  });
  let compileLoop: CompileLoop;
  const scheduler = new WriteScheduler({
    kv,
    clock,
    logger,
    metrics,
    status,
    pusherId: config.pusherId,
    canWrite: () => {
      const ok = leadership.canWrite();
      status.leaseOk = ok;
      return ok;
    },
    writeDeadline: () => leadership.writeDeadline(),
    minIntervalMs: minWriteIntervalMs,
    heartbeatMs: config.heartbeatSeconds * 1000,
    backoff: tuning.kvBackoff ?? { baseMs: 500, maxMs: 30_000 },
    onLoaded: (map) => {
      compileLoop.setPrevious(map);
      compileLoop.trigger();
    },
    onKvAhead: (kvMap) => void follower.kvAhead(kvMap, () => stopped),
    onWriteSettled: () => compileLoop.wake(),
  });
  const history = new HistoryTracker();
  const follower = new HistoryFollower({
    history,
    status,
    logger,
    report: (message) => scheduler.historyChanged(message),
    compileNow: () => compileLoop.compileNow(),
    recompile: () => compileLoop.trigger(),
  });
  const expiry = new ExpiryTimer(clock, () => compileLoop.trigger());
  let lastProblems = "";
  compileLoop = new CompileLoop({
    client: etcd,
    prefix: config.prefix,
    floorPool: config.floorPool,
    originTemplate: config.originTemplate,
    clock,
    logger,
    status,
    history,
    onNewHistory: (change, revision) => follower.followed(change, revision),
    minIntervalMs: minWriteIntervalMs,
    writableAt: () => scheduler.nextWriteAt(),
    onRead: (read, durationMs) => {
      metrics.rangeReads.inc();
      metrics.rangeReadDuration.observe(durationMs / 1000);
      metrics.rangePages.inc(read.pages);
    },
    onCompiled: (result, compileMs) => {
      metrics.compileDuration.observe(compileMs / 1000);
      // The map's own list: already bounded (a prefix of 100,000 junk keys has as many problems).
      const problems = result.map.problems;
      const joined = problems.join("\n");
      if (joined !== lastProblems) {
        lastProblems = joined;
        if (problems.length)
          logger.warn({ problems, revision: result.map.rev }, "routing problems");
      }
      if (status.role === "standby") status.problems = problems;
      routing.update(result);
      expiry.arm(nextOverrideExpiry(result.state, new Date(clock.now())));
      scheduler.submit(result);
    },
  });

  let stopped = false;
  let relisting: Promise<void> | null = null;
  let relistAgain = false;
  const connection = deps.openWatchClient
    ? { connect: deps.openWatchClient, owned: true }
    : { connect: () => etcd, owned: false };
  const watch = new WatchTrigger(connection, config.prefix, {
    onChange: (revision) => {
      status.observeRevision(revision);
      compileLoop.trigger();
    },
    onLost: (reason, error) => {
      metrics.watchRestarts.inc({ reason });
      if (reason === "disconnected") status.etcdFailed(error);
      logger.warn({ reason, err: error }, "watch lost; re-reading the prefix");
      relist();
    },
  });

  const guard = new WatchGuard({
    prefix: config.prefix,
    intervalMs: tuning.probeIntervalMs ?? 1_000,
    silenceMs: tuning.watchSilenceMs ?? 2_000,
    clock,
    logger,
    status,
    client: () => watch.client,
    compiled: () => compileLoop.compiledVersion,
    watched: () => watch.coveredRevision,
    onMoved: () => compileLoop.nudge(),
    onSilent: () => {
      metrics.watchRestarts.inc({ reason: "silent" });
      watch.reconnect();
      relist();
    },
  });

  /** List-then-watch: one consistent read at R, then a watch from R + 1. */
  function relist(): void {
    if (relisting) {
      relistAgain = true;
      return;
    }
    relisting = (async () => {
      do {
        relistAgain = false;
        watch.stop();
        const revision = await compileLoop.compileNow();
        if (stopped) return;
        watch.start(revision);
      } while (relistAgain && !stopped);
    })().finally(() => {
      relisting = null;
    });
  }

  let lateWriteTimer: NodeJS.Timeout | null = null;
  leadership.on("elected", () => {
    status.role = "leader";
    logger.info({ pusher: config.pusherId }, "leading: writing to KV");
    scheduler.activate();
    // A former leader's write sent just before its window closed may still land: check KV again.
    if (lateWriteTimer) clearTimeout(lateWriteTimer);
    lateWriteTimer = setTimeout(() => resync(), config.electionTtl * 1000);
    lateWriteTimer.unref();
  });
  leadership.on("demoted", (reason) => {
    status.role = "standby";
    status.leaseOk = false;
    logger.warn({ reason }, "no longer leader: stopped writing");
    scheduler.deactivate();
  });

  let resyncTimer: NodeJS.Timeout | null = null;
  const resync = () => {
    if (stopped) return;
    void compileLoop.compileNow().then(() => scheduler.requestReconcile());
  };

  return {
    status,
    metrics,
    routing,
    start() {
      scheduler.start();
      relist();
      guard.start();
      leadership.start();
      resyncTimer = setInterval(resync, config.resyncSeconds * 1000);
      resyncTimer.unref();
    },
    resync,
    async stop(opts = {}) {
      stopped = true;
      if (resyncTimer) clearInterval(resyncTimer);
      if (lateWriteTimer) clearTimeout(lateWriteTimer);
      guard.stop();
      expiry.clear();
      watch.stop();
      const flushMs = opts.flushTimeoutMs ?? 5_000;
      // A change committed just before SIGTERM may not be compiled yet (its watch event is in
      // flight): one last range read takes it. Bounded, so an unreachable etcd cannot hold exit.
      const giveUp = new AbortController();
      await Promise.race([compileLoop.compileNow(), sleep(flushMs / 2, giveUp.signal)]);
      giveUp.abort();
      compileLoop.stop();
      const drained = await scheduler.flush(flushMs);
      if (!drained) logger.warn("shutdown: a pending KV write did not finish in time");
      await scheduler.stop();
      await leadership.resign();
      await relisting?.catch(() => {});
      watch.close();
    },
    async abandon() {
      stopped = true;
      if (resyncTimer) clearInterval(resyncTimer);
      if (lateWriteTimer) clearTimeout(lateWriteTimer);
      guard.stop();
      expiry.clear();
      watch.close();
      compileLoop.stop();
      scheduler.deactivate();
      await scheduler.stop();
      await leadership.abandon();
      await sleep(0);
    },
  };
}
