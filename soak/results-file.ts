import { mkdir, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { Driver } from "./driver.js";
import type { EdgeClients } from "./edge-clients.js";
import type { GrowthVerdict } from "./no-growth.js";
import type { SoakOptions } from "./options.js";
import type { Convergence, KillEvent, LeasePoll } from "./oracle.js";
import type { Sample } from "./samples.js";
import type { UiClients } from "./ui-clients.js";
import type { Viewers } from "./viewer-figures.js";
import type { World } from "./world.js";

/** Everything a finished run writes down (soak/README.md: `results.json`, `summary.json`). */
export interface RunOutcome {
  readonly opts: SoakOptions;
  /** Epoch ms the harness started, and the measured clock's start. */
  readonly t0: number;
  readonly measuredFrom: number;
  /** Seconds measured. */
  readonly endT: number;
  readonly world: World;
  readonly driver: Driver;
  readonly edge: EdgeClients;
  readonly ui: UiClients;
  readonly viewers: Viewers;
  readonly convergences: readonly Convergence[];
  readonly leases: {
    readonly atStart: number | null;
    readonly baseline: number;
    readonly final: number | null;
    readonly kills: readonly KillEvent[];
  };
  readonly etcdMetricNames: ReadonlySet<string>;
  readonly events: ReadonlyArray<{ readonly t: number; readonly what: string }>;
  readonly growth: readonly GrowthVerdict[];
  readonly failures: readonly string[];
  /** Paths of the plots written. */
  readonly plots: readonly string[];
  readonly samples: readonly Sample[];
  readonly leasePolls: readonly LeasePoll[];
}

/** The figures of `summary.json` (results.json holds these and the samples). */
export type RunSummary = ReturnType<typeof summarize>;

function summarize(r: RunOutcome, root: string) {
  const kvWrites = r.world.kv.requests.filter((q) => q.method === "PUT" && q.status === 200).length;
  const ms = r.convergences.flatMap((c) => (c.ms === null ? [] : [c.ms])).sort((a, b) => a - b);
  return {
    options: r.opts,
    startedAt: new Date(r.measuredFrom).toISOString(),
    startupSeconds: (r.measuredFrom - r.t0) / 1000,
    measuredSeconds: r.endT,
    totalSeconds: (Date.now() - r.t0) / 1000,
    processes: {
      heartbeats: r.world.heartbeats.length,
      pushers: [...r.world.pushers, r.world.snapshot].map((p) => p.id),
      etcdMembers: r.world.cluster.size,
    },
    counts: {
      changes: r.driver.changes(),
      changesRefused: r.driver.failed(),
      boosts: r.driver.boosts(),
      boostFailures: r.driver.boostFailures(),
      tempPools: r.driver.tempPools(),
      kvWrites,
      kvWritesPerHour: Math.round((kvWrites / r.endT) * 3600),
      kvRequests: r.world.kv.requests.length,
      routesCopiedToWorker: r.edge.copies(),
      answers: Object.fromEntries(r.edge.byStatus),
    },
    convergence: {
      checks: r.convergences.length,
      failed: r.convergences.filter((c) => c.ms === null).length,
      p50Ms: ms[Math.floor(ms.length / 2)] ?? null,
      maxMs: ms[ms.length - 1] ?? null,
    },
    leases: r.leases,
    ui: { held: r.ui.held, reloaded: r.ui.reloaded },
    viewers: {
      observerStarts: r.viewers.observer.starts,
      observerLeases: r.viewers.observer.leases().map((l) => l.hex),
      observerScrapes: r.viewers.counters.scrapes,
      requestsCounted: r.viewers.counters.requests,
      starvedCounted: r.viewers.counters.starved,
      counterDrops: r.viewers.counters.dropCount,
      counterDropsSeen: r.viewers.counters.drops,
      maxObservedKeys: r.viewers.maxKeys,
      keysOffLease: r.viewers.offLeaseCount,
      keysOffLeaseSeen: r.viewers.offLease,
      aggregator: {
        maxStorageMiB: Math.round((r.viewers.maxStorageBytes / 2 ** 20) * 100) / 100,
        maxRows: r.viewers.maxRows,
        maxMinutesHeld: r.viewers.maxMinutesHeld,
      },
    },
    etcdMetricNames: [...r.etcdMetricNames].sort(),
    events: r.events,
    badAnswers: r.edge.bad,
    growth: r.growth,
    failures: r.failures,
    plots: r.plots.map((p) => relative(root, p)),
  };
}

/** Writes `results.json` (summary, samples and lease polls) and `summary.json` into `out`. */
export async function writeResults(out: string, r: RunOutcome, root: string): Promise<RunSummary> {
  await mkdir(out, { recursive: true });
  const summary = summarize(r, root);
  const results = { ...summary, samples: r.samples, leasePolls: r.leasePolls };
  await writeFile(join(out, "results.json"), `${JSON.stringify(results, null, 1)}\n`);
  await writeFile(join(out, "summary.json"), `${JSON.stringify(summary, null, 1)}\n`);
  return summary;
}
