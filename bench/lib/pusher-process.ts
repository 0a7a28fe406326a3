import { type PusherProcess, startPusherProcess } from "../../testkit/pusher-process.js";
import type { Cleanup } from "./cleanup.js";
import { childPids, commName, rssMb } from "./proc.js";

/** Where the bench's pusher writes (the local sink unless `env` says otherwise). */
export interface BenchPusherOptions {
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly persistDir: string;
  readonly namespaceId: string;
  readonly electionKey: string;
  readonly port: number;
  readonly cleanup: Cleanup;
  readonly env?: Readonly<Record<string, string>>;
  /** `NODE_OPTIONS` for the pusher (e.g. the systemd unit's heap bounds); default none. */
  readonly nodeOptions?: string | null;
}

function nodeOptions(fallback: string | null | undefined): { NODE_OPTIONS?: string } {
  const v = process.env.BENCH_PUSHER_NODE_OPTIONS ?? fallback;
  return v ? { NODE_OPTIONS: v } : {};
}

/**
 * Starts the pusher the bench measures (`npm run bench` builds dist/ first: prebench), stopped by
 * `cleanup`; waits until it answers. BENCH_PUSHER_ENTRY, BENCH_PUSHER_NODE_ARGS,
 * BENCH_PUSHER_NODE_OPTIONS and BENCH_PUSHER_ENV (JSON) change how it runs, for memory experiments.
 */
export async function startBenchPusher(o: BenchPusherOptions): Promise<PusherProcess> {
  const pusher = await startPusherProcess({
    etcdEndpoint: o.etcdEndpoint,
    prefix: o.prefix,
    electionKey: o.electionKey,
    electionTtl: 5,
    port: o.port,
    nodeArgs: (process.env.BENCH_PUSHER_NODE_ARGS ?? "").split(" ").filter(Boolean),
    ...(process.env.BENCH_PUSHER_ENTRY ? { entry: process.env.BENCH_PUSHER_ENTRY } : {}),
    outputLimit: 64 * 1024,
    env: {
      KV_SINK: "local",
      KV_LOCAL_PERSIST: o.persistDir,
      KV_NAMESPACE_ID: o.namespaceId,
      // BENCH_PUSHER_NODE_OPTIONS (even empty) wins, for experiments without editing the bench.
      ...nodeOptions(o.nodeOptions),
      // EDGE_PUSHER_TUNED set (even empty): the pusher runs without bin/service-tuning.js's settings.
      ...(process.env.EDGE_PUSHER_TUNED !== undefined ? { EDGE_PUSHER_TUNED: "0" } : {}),
      ...(JSON.parse(process.env.BENCH_PUSHER_ENV || "{}") as Record<string, string>),
      ...o.env,
    },
  });
  o.cleanup.add(`pusher ${pusher.pid}`, () => pusher.stop(15_000));
  await pusher.ready(60_000);
  return pusher;
}

/** RSS of the pusher's local-sink workerd children in MiB. */
export function workerdChildrenRssMb(pid: number): number {
  return childPids(pid)
    .filter((c) => commName(c).startsWith("workerd"))
    .reduce((s, c) => s + (rssMb(c) || 0), 0);
}
