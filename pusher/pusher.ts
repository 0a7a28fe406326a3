import { nextOverrideExpiry } from "../core/compile/override-expiry.js";
import { type CompiledMap, carriedState } from "../core/index.js";
import { sleep } from "./clock.js";
import { CompileLoop } from "./compile-loop.js";
import { CompileReport } from "./compile-report.js";
import { ExpiryTimer } from "./expiry-timer.js";
import { HistoryFollower } from "./history-follower.js";
import { HistoryTracker } from "./history-tracker.js";
import { Leadership } from "./leadership.js";
import { createMetrics } from "./metrics.js";
import type { Pusher, PusherDeps } from "./pusher-types.js";
import { SoloLeadership, type WriterRole } from "./solo-leadership.js";
import { PusherStatus } from "./status.js";
import { RoutingView } from "./ui/routing-view.js";
import { WatchGuard } from "./watch-guard.js";
import { WatchTrigger } from "./watch-trigger.js";
import { WriteScheduler } from "./write-scheduler.js";
import { KV_WRITE_SPACING_MS } from "./write-slots.js";

export type { Pusher, PusherDeps, PusherLoopConfig, PusherTuning } from "./pusher-types.js";

/**
 * Wires the loop: leadership → (list, then watch as a trigger) → compile → throttled KV writes.
 * Standbys keep compiling so their status is current and a takeover starts from fresh state.
 */
export function createPusher(deps: PusherDeps): Pusher {
  const { etcd, kv, logger, clock, config } = deps;
  const tuning = deps.tuning ?? {};
  const minWriteIntervalMs = tuning.minWriteIntervalMs ?? KV_WRITE_SPACING_MS;
  const status = new PusherStatus(
    config.pusherId,
    clock,
    tuning.secrets ?? [],
    tuning.unhealthyAfterMs ?? 30_000,
  );
  const metrics = createMetrics(status, { heartbeatSeconds: config.heartbeatSeconds });
  // compileLoop is made below; the view asks for what viewers get only when a page asks.
  const routing = new RoutingView(config.floorPool, () => compileLoop.observed.pairs());
  const leadership: WriterRole = deps.solo
    ? new SoloLeadership(clock)
    : new Leadership({
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
    ...(tuning.kvStaleReadMs !== undefined ? { staleReadMs: tuning.kvStaleReadMs } : {}),
    onLoaded: (map) => {
      compileLoop.setCarried(carriedState({ own: lastCompiled, kv: map }));
      compileLoop.trigger();
      return true;
    },
    onKvAhead: (kvMap) => void follower.kvAhead(kvMap, () => stopped),
    onWriteSettled: () => {
      compileLoop.wake();
      settled();
    },
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
  const compileReport = new CompileReport({ metrics, logger, status, routing });
  let lastCompiled: CompiledMap | null = null;
  compileLoop = new CompileLoop({
    client: etcd,
    prefix: config.prefix,
    floorPool: config.floorPool,
    originTemplate: config.originTemplate,
    shedRecoverSeconds: config.shedRecoverSeconds,
    clock,
    logger,
    status,
    history,
    onNewHistory: (change, revision) => follower.followed(change, revision),
    minIntervalMs: minWriteIntervalMs,
    writableAt: () => scheduler.nextWriteAt(),
    routesDue: () => scheduler.routesPending(),
    onRead: (read, durationMs) => {
      metrics.rangeReads.inc();
      if (read.kind === "full") metrics.fullReads.inc({ reason: read.reason ?? "first" });
      metrics.rangeReadDuration.observe(durationMs / 1000);
      metrics.rangePages.inc(read.pages);
    },
    onCompiled: (result, compileMs) => {
      lastCompiled = result.map;
      expiry.arm(
        earliest(nextOverrideExpiry(result.state, new Date(clock.now())), result.nextShedStepAt),
      );
      scheduler.submit(result);
      // After the write has started (it runs on promise callbacks up to its first I/O): what
      // only reports on the compile must not delay the change on its way to KV.
      setImmediate(() => compileReport.report(result, compileMs));
      settled();
    },
  });

  /**
   * Tells `onIdle`, once the current turn is done, if nothing is left to read or write then.
   * Not before the election has answered (leader, or standing by): its replies are work too, and
   * a heap trim's GC would hold them up (at 1,000 keys, ~200 ms of the first push).
   */
  function settled(): void {
    const onIdle = deps.onIdle;
    if (!onIdle) return;
    setImmediate(() => {
      if (!stopped && roleKnown && compileLoop.idle && !scheduler.hasPending()) onIdle();
    });
  }

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
    onDeleted: (key, revision) => compileLoop.noteDeleted(key, revision),
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
        // Full: after a lost watch etcd may have been restored, where mod revisions repeat.
        const revision = await compileLoop.compileNow({ full: true });
        if (stopped) return;
        watch.start(revision);
      } while (relistAgain && !stopped);
    })().finally(() => {
      relisting = null;
    });
  }

  let roleKnown = false;
  leadership.on("waiting", () => {
    roleKnown = true;
    settled();
  });
  let lateWriteTimer: NodeJS.Timeout | null = null;
  leadership.on("elected", () => {
    roleKnown = true;
    status.role = "leader";
    logger.info(
      { pusher: config.pusherId },
      deps.solo ? "writing snapshot files (no election)" : "leading: writing to KV",
    );
    scheduler.activate();
    // A former leader's write sent just before its window closed may still land: read KV
    // again. Only KV: etcd was read at activation, and the watch follows it since.
    if (lateWriteTimer) clearTimeout(lateWriteTimer);
    lateWriteTimer = setTimeout(() => {
      if (!stopped) scheduler.requestReconcile();
    }, config.electionTtl * 1000);
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
    void compileLoop.compileNow({ full: true }).then(() => scheduler.requestReconcile());
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

/** The earlier of two instants, either of which may be absent. */
function earliest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}
