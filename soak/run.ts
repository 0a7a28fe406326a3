/**
 * `npm run soak -- [--minutes N | --quick]`: the whole system for a long while under steady
 * change and regular kills, recording every process's memory, descriptors, handles and metric
 * series, and etcd's leases and watchers, every 10 s; then the no-growth test over the second
 * half and the invariants of the whole run. See soak/README.md.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Lease } from "etcd3";
import { Cleanup } from "../bench/lib/cleanup.js";
import { ROOT } from "../testkit/pusher-process.js";
import { COUNTRIES } from "../testkit/sample-countries.js";
import { runChaosStep } from "./chaos.js";
import { type SoakClock, startClock } from "./clock.js";
import { CounterWatch } from "./counter-watch.js";
import { startDriver } from "./driver.js";
import { startEdgeClients } from "./edge-clients.js";
import { growthFailure } from "./growth-failure.js";
import { invariantFailures } from "./invariants.js";
import { FLOOR_POOL, SAMPLE_EVERY_SECONDS, SETTLING_SECONDS } from "./layout.js";
import { GROWTH_GOALS, judgeGrowth, WARMUP_SECONDS, windowOptions } from "./no-growth.js";
import { startObserver } from "./observer-process.js";
import { parseSoakOptions } from "./options.js";
import {
  type Convergence,
  checkConverged,
  heldLeases,
  type KillEvent,
  type LeasePoll,
  leaseBaseline,
} from "./oracle.js";
import { writePlots } from "./plots.js";
import { printReport } from "./report.js";
import { writeResults } from "./results-file.js";
import { type MemberStarts, sampleAll } from "./sampler.js";
import type { Sample } from "./samples.js";
import { chaosSchedule } from "./schedule.js";
import { selfCheck } from "./self-check.js";
import { seriesLeftByRemovedPools } from "./series-check.js";
import { onStopSignal } from "./stop-signals.js";
import { startUiClients } from "./ui-clients.js";
import { newViewers } from "./viewer-figures.js";
import { startWorld } from "./world.js";

const t0 = Date.now();
const log = (line: string) =>
  process.stderr.write(`[soak ${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

async function main(): Promise<number> {
  const opts = parseSoakOptions(process.argv.slice(2));
  const seconds = opts.minutes * 60;
  const cleanup = new Cleanup();
  let stopping = false;
  onStopSignal((sig) => {
    stopping = true;
    log(`${sig}: stopping`);
    void cleanup.runAll().then(() => process.exit(130));
  });
  try {
    const world = await startWorld(cleanup, log, { heapTrim: opts.heapTrim });
    const viewersDir = mkdtempSync(join(tmpdir(), "edge-soak-viewers-"));
    cleanup.add("viewers dir", () => rmSync(viewersDir, { recursive: true, force: true }));
    const observeToken = randomBytes(24).toString("base64url");
    const persistDir = join(viewersDir, "workerd");
    let measuring: SoakClock | null = null;
    const edge = await startEdgeClients(
      world.kv,
      { floorPool: FLOOR_POOL, originTemplate: world.originTemplate, observeToken, persistDir },
      COUNTRIES,
      () => measuring?.now() ?? 0,
    );
    cleanup.add("worker and clients", () => edge.stop());
    const observer = startObserver(
      {
        edgeUrl: edge.url,
        token: observeToken,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: process.env.HOME ?? "/tmp",
          ...world.edgectlEnv,
        },
        statePath: join(viewersDir, "observer-state.json"),
      },
      cleanup,
    );
    const viewers = newViewers(observer, persistDir, new CounterWatch());
    await observer.registered(120_000);
    log(
      `edgectl observe: polling ${edge.url}, observed/ keys on lease ${observer.leases()[0]?.hex}`,
    );
    const ui = startUiClients(`http://127.0.0.1:${world.snapshot.process.port}`);
    cleanup.add("ui tabs", () => ui.stop());
    const workerdStartedAt = Date.now();
    const clock = startClock();
    measuring = clock;
    const startupSeconds = (clock.startedAt - t0) / 1000;
    log(`started in ${startupSeconds.toFixed(1)} s; measuring ${opts.minutes} min`);
    const memberStarts: MemberStarts = world.cluster.members.map(() => clock.startedAt - 1);
    const driver = startDriver(world, clock, opts.seed);
    cleanup.add("driver", () => driver.stop());
    const alive = () => !stopping && clock.now() < seconds;

    const { atStart, baseline } = await leaseBaseline(world);
    log(
      `leases held at start: ${atStart ?? "unknown"}, settled: ${baseline} (${world.heartbeats.length} heartbeats, ${world.pushers.length} pushers)`,
    );

    const samples: Sample[] = [];
    const metricNames = new Set<string>();
    const sample = () =>
      sampleAll(
        world,
        edge,
        driver,
        clock,
        memberStarts,
        workerdStartedAt,
        viewers,
        samples,
        metricNames,
      );
    const sampler = (async () => {
      await sample();
      while (alive()) {
        await clock.untilPhase(SAMPLE_EVERY_SECONDS, 0, alive);
        if (alive()) await sample();
      }
    })();

    const convergences: Convergence[] = [];
    const oracle = (async () => {
      while (alive()) {
        await clock.untilPhase(10, 5, alive);
        if (!alive()) break;
        const c = await checkConverged(world, driver, clock);
        convergences.push(c);
        if (c.ms === null) log(`KV did not equal compile(etcd) in 30 s: ${c.mismatch}`);
      }
    })();

    const leasePolls: LeasePoll[] = [];
    const leasePoller = (async () => {
      while (alive()) {
        const held = await heldLeases(world);
        if (held !== null) leasePolls.push({ t: clock.now(), held });
        await sleep(2_000);
      }
    })();

    const kills: KillEvent[] = [];
    const events: Array<{ t: number; what: string }> = [];
    const planted: Lease[] = [];
    const note = (what: string) => {
      events.push({ t: clock.now(), what });
      log(what);
    };
    const chaos = (async () => {
      let heartbeatKills = 0;
      const c = { world, clock, kills, planted, memberStarts, note, viewers, plantedKeys: 0 };
      for (const step of chaosSchedule(seconds, opts.plantLeak)) {
        await clock.until(step.t, alive);
        if (!alive()) break;
        await runChaosStep(c, step, heartbeatKills);
        if (step.kind === "kill-heartbeat") heartbeatKills += 1;
      }
    })();
    cleanup.add("planted leases", async () => {
      await Promise.all(planted.map((l) => l.revoke().catch(() => undefined)));
    });

    const progress = (async () => {
      while (alive()) {
        await clock.untilPhase(60, 9, alive);
        if (!alive()) break;
        const last = convergences[convergences.length - 1];
        log(
          `t=${clock.now().toFixed(0)} s: ${driver.changes()} changes (${driver.failed()} refused, ${driver.skipped()} skipped), ${driver.boosts()} boosts, ${convergences.filter((c) => c.ms !== null).length}/${convergences.length} converged (last ${last?.ms ?? "-"} ms), answers ${JSON.stringify(Object.fromEntries(edge.byStatus))}`,
        );
      }
    })();

    await clock.until(seconds, () => !stopping);
    await Promise.all([sampler, oracle, leasePoller, chaos, progress]);
    const endT = clock.now();
    await driver.stop();
    const seriesLeft = await seriesLeftByRemovedPools(world);
    const finalHeld = await heldLeases(world);
    await edge.stop();
    await ui.stop();

    // Verdicts.
    const growth = judgeGrowth(samples, GROWTH_GOALS, windowOptions(seconds, SETTLING_SECONDS));
    const grew = growth.filter((g) => g.status === "fail");
    const failures = [
      ...grew.map((g) => growthFailure(g, samples, seconds / 2)),
      ...invariantFailures({
        seconds,
        endT,
        convergences,
        answers: edge.byStatus,
        leasePolls,
        kills,
        baseline,
        finalHeld,
        seriesLeft,
        changes: driver.changes(),
        ui,
        viewers,
      }),
    ];

    const out = resolve(ROOT, opts.out);
    await mkdir(out, { recursive: true });
    const plots = await writePlots(join(out, "plots"), samples, seconds / 2);
    const summary = await writeResults(
      out,
      {
        opts,
        t0,
        measuredFrom: clock.startedAt,
        endT,
        world,
        driver,
        edge,
        ui,
        viewers,
        convergences,
        leases: { atStart, baseline, final: finalHeld, kills },
        etcdMetricNames: metricNames,
        events,
        growth,
        failures,
        plots,
        samples,
        leasePolls,
      },
      ROOT,
    );

    const { convergence: conv, counts } = summary;
    printReport({
      judgedSeconds: seconds / 2,
      warmupSeconds: WARMUP_SECONDS,
      growth,
      summary: [
        `convergence: ${conv.checks} checks, ${conv.failed} failed, p50 ${conv.p50Ms} ms, max ${conv.maxMs} ms`,
        `changes ${counts.changes} (${counts.changesRefused} refused), boosts ${counts.boosts}, temp pools ${counts.tempPools}, KV writes ${counts.kvWrites}, answers ${JSON.stringify(counts.answers)}`,
        `viewers: ${summary.viewers.requestsCounted} requests counted (${summary.viewers.starvedCounted} starved) by ${summary.viewers.observerStarts} observer processes; observed/ keys at most ${summary.viewers.maxObservedKeys}; aggregator at most ${summary.viewers.aggregator.maxStorageMiB} MiB, ${summary.viewers.aggregator.maxRows} rows, ${summary.viewers.aggregator.maxMinutesHeld} minutes`,
        `leases held: baseline ${baseline}, end ${finalHeld}; results in ${relative(ROOT, out)}/results.json, plots in ${relative(ROOT, out)}/plots`,
      ],
      failures,
    });
    log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    if (opts.expectFail.length > 0) {
      const check = selfCheck(growth, opts.expectFail);
      process.stdout.write(`${check.line}\n`);
      return check.ok ? 0 : 1;
    }
    return failures.length === 0 ? 0 : 1;
  } finally {
    await cleanup.runAll();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`soak: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(2);
  },
);
