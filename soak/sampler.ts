import type { SoakClock } from "./clock.js";
import type { Driver } from "./driver.js";
import type { EdgeClients } from "./edge-clients.js";
import {
  boostLeases,
  fetchMetrics,
  listedLeases,
  memberFigures,
  metricTotals,
} from "./etcd-figures.js";
import { findDescendants, procStats } from "./proc-stats.js";
import type { Figure, Sample } from "./samples.js";
import { countSeries } from "./series-count.js";
import { socketPeers } from "./socket-peers.js";
import { sampleViewers, type Viewers } from "./viewer-figures.js";
import type { World } from "./world.js";

/** When each etcd member last started (ms), kept by the chaos schedule. */
export type MemberStarts = number[];

async function getText(url: string): Promise<string | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

/** Takes one sample of every process and of the cluster. */
export async function sampleAll(
  world: World,
  edge: EdgeClients,
  driver: Driver,
  clock: SoakClock,
  memberStarts: MemberStarts,
  workerdStartedAt: number,
  viewers: Viewers,
  out: Sample[],
  notes: Set<string>,
): Promise<void> {
  const t = clock.now();
  const put = (series: string, figure: Figure, value: number | null | undefined, age?: number) => {
    if (value === null || value === undefined || !Number.isFinite(value)) return;
    out.push({ t, series, figure, value, ...(age === undefined ? {} : { age }) });
  };
  const ageOf = (startedAt: number) => (Date.now() - startedAt) / 1000;
  const memberPids = new Map<number, Member>();
  const nodeProcess = async (
    series: string,
    pid: number,
    age: number,
    metricsText: string | null,
  ) => {
    const st = await procStats(pid);
    if (!st) return;
    put(series, "rss_mib", st.rssMiB, age);
    put(series, "anon_mib", st.anonMiB, age);
    put(series, "fds", st.fds, age);
    if (metricsText) {
      const totals = metricTotals(metricsText);
      const live =
        totals.get("edge_pusher_heap_live_bytes") ??
        totals.get("edge_heartbeat_heap_live_bytes") ??
        totals.get("edge_observer_heap_live_bytes");
      // 0 until the process's first full collection: no live heap to record yet.
      if (live) put(series, "heap_mib", live / 2 ** 20, age);
      put(
        series,
        "heap_used_mib",
        (totals.get("nodejs_heap_size_used_bytes") ?? Number.NaN) / 2 ** 20,
        age,
      );
      put(
        series,
        "heap_total_mib",
        (totals.get("nodejs_heap_size_total_bytes") ?? Number.NaN) / 2 ** 20,
        age,
      );
      put(
        series,
        "external_mib",
        (totals.get("nodejs_external_memory_bytes") ?? Number.NaN) / 2 ** 20,
        age,
      );
      put(series, "handles", totals.get("nodejs_active_handles_total"), age);
      put(series, "ui_streams", totals.get("edge_pusher_ui_streams"), age);
      put(series, "series", countSeries(metricsText), age);
    }
  };

  await Promise.all([
    ...[...world.pushers, world.snapshot]
      .filter((p) => p.process.proc.alive())
      .map(async (p) => {
        const [status, metrics] = await Promise.all([p.process.status(), p.process.metrics()]);
        const role = status?.role ?? "down";
        await nodeProcess(
          `pusher:${p.id}#${p.process.pid}@${role}`,
          p.process.pid,
          ageOf(p.startedAt),
          metrics,
        );
      }),
    ...world.heartbeats
      .filter((h) => h.proc.alive())
      .map(async (h) => {
        const metrics =
          h.port === null ? null : await getText(`http://127.0.0.1:${h.port}/metrics`);
        await nodeProcess(
          `heartbeat:${h.name}#${h.proc.pid}`,
          h.proc.pid,
          ageOf(h.startedAt),
          metrics,
        );
      }),
    (async () => {
      const o = viewers.observer;
      const metrics = o.proc.alive() ? await o.metrics() : null;
      await Promise.all([
        o.proc.alive()
          ? nodeProcess(`observer#${o.proc.pid}`, o.proc.pid, ageOf(o.startedAt), metrics)
          : null,
        sampleViewers(world, viewers, t, metrics, put, ageOf(workerdStartedAt)),
      ]);
    })(),
    (async () => {
      put("worker:edge", "heap_mib", await edge.heap.usedAfterGcMiB(), ageOf(workerdStartedAt));
      for (const pid of await findDescendants(process.pid, /(^|\/)workerd /)) {
        const st = await procStats(pid);
        if (!st) continue;
        put(`workerd#${pid}`, "rss_mib", st.rssMiB, ageOf(workerdStartedAt));
        put(`workerd#${pid}`, "anon_mib", st.anonMiB, ageOf(workerdStartedAt));
        put(`workerd#${pid}`, "fds", st.fds, ageOf(workerdStartedAt));
      }
    })(),
    ...world.cluster.members.map(async (m, i) => {
      if (!m.running) return;
      const [pid] = await findDescendants(process.pid, new RegExp(`(^|/)etcd --name ${m.name} `));
      if (pid === undefined) return;
      const age = ageOf(memberStarts[i] ?? clock.startedAt);
      memberPids.set(pid, {
        series: `etcd:${m.name}`,
        clientPort: Number(new URL(m.endpoint).port),
        age,
      });
      const st = await procStats(pid);
      if (!st) return;
      put(`etcd:${m.name}#${pid}`, "rss_mib", st.rssMiB, age);
      put(`etcd:${m.name}#${pid}`, "anon_mib", st.anonMiB, age);
      put(`etcd:${m.name}#${pid}`, "fds", st.fds, age);
    }),
    (async () => {
      const mem = process.memoryUsage();
      put("harness", "rss_mib", mem.rss / 2 ** 20);
      put("harness", "heap_used_mib", mem.heapUsed / 2 ** 20);
      put("harness", "fds", (await procStats(process.pid))?.fds);
    })(),
    (async () => {
      // Watchers and streams on every running member; leases from the longest-running one
      // (a restarted member's lease counters start again unless it exposes its initial count).
      const texts = await Promise.all(
        world.cluster.members.map((m) => (m.running ? fetchMetrics(m.endpoint) : null)),
      );
      const figs = texts.map((x) => (x ? memberFigures(x) : null));
      for (const f of figs) for (const n of f?.names ?? []) notes.add(n);
      const answered = figs.filter((f) => f !== null);
      if (answered.length === world.cluster.members.filter((m) => m.running).length) {
        put("cluster", "watchers", sum(answered.map((f) => f.watchers)));
        put("cluster", "watch_streams", sum(answered.map((f) => f.watchStreams)));
      }
      const order = memberStarts
        .map((s, i) => ({ s, i }))
        .sort((a, b) => a.s - b.s)
        .map((x) => x.i);
      const leaseFrom = order.find((i) => figs[i]?.leases !== null && figs[i] !== null);
      const leases = leaseFrom === undefined ? null : (figs[leaseFrom]?.leases ?? null);
      const trusted =
        leaseFrom !== undefined &&
        ((memberStarts[leaseFrom] ?? 0) <= clock.startedAt || figs[leaseFrom]?.countsRecovered);
      const member = world.members[leaseFrom ?? 0];
      const [listed, boosts] = member
        ? await Promise.all([listedLeases(member), boostLeases(member, world.prefix)])
        : [null, null];
      if (trusted) put("cluster", "leases", leases);
      put("cluster", "leases_listed", listed);
      if (trusted && leases !== null && boosts !== null)
        put("cluster", "leases_held", leases - boosts);
    })(),
  ]);
  await sampleSockets(world, viewers, memberPids, put);
  put(
    "cluster",
    "kv_writes",
    world.kv.requests.filter((r) => r.method === "PUT" && r.status === 200).length,
  );
  put("cluster", "changes", driver.changes());
  let ok = 0;
  let other = 0;
  for (const [status, n] of edge.byStatus) {
    if (status >= 200 && status <= 299) ok += n;
    else other += n;
  }
  put("cluster", "responses_2xx", ok);
  put("cluster", "responses_other", other);
}

/** An etcd member found among the harness's descendants. */
interface Member {
  /** `etcd:m0` */
  readonly series: string;
  readonly clientPort: number;
  /** Seconds since it started. */
  readonly age: number;
}

/**
 * The etcd members' and the harness's descriptors by what holds the other end, and each
 * member's descriptors less its peers' (`fds_less_peers`).
 */
async function sampleSockets(
  world: World,
  viewers: Viewers,
  memberPids: ReadonlyMap<number, Member>,
  put: (series: string, figure: Figure, value: number, age?: number) => void,
): Promise<void> {
  const kinds = new Map<number, string>([...memberPids].map(([pid]) => [pid, "etcd"]));
  kinds.set(process.pid, "harness");
  for (const p of [...world.pushers, world.snapshot]) kinds.set(p.process.pid, "pusher");
  for (const h of world.heartbeats) kinds.set(h.proc.pid, "heartbeat");
  kinds.set(viewers.observer.proc.pid, "observer");
  const label = (pid: number, cmdline: string) =>
    kinds.get(pid) ??
    (/(^|\/)workerd /.test(cmdline)
      ? "workerd"
      : /edgectl/.test(cmdline)
        ? "edgectl"
        : /(^|\/)etcd /.test(cmdline)
          ? "etcd"
          : "other-process");
  const named = new Map([...memberPids].map(([pid, m]) => [pid, m.series]));
  named.set(process.pid, "harness");
  const targets = [
    ...[...memberPids].map(([pid, m]) => ({ pid, clientPort: m.clientPort })),
    { pid: process.pid },
  ];
  for (const [pid, byPeer] of await socketPeers(targets, label)) {
    for (const [peer, n] of byPeer) put(`${named.get(pid)}<-${peer}`, "sockets", n);
    const member = memberPids.get(pid);
    if (member && byPeer.size > 0) {
      let own = 0;
      for (const [peer, n] of byPeer) if (peer !== "peer") own += n;
      put(`${member.series}#${pid}`, "fds_less_peers", own, member.age);
    }
  }
}

function sum(xs: ReadonlyArray<number | null>): number | null {
  let total = 0;
  for (const x of xs) {
    if (x === null) return null;
    total += x;
  }
  return total;
}
