import { type PusherProcess, startPusherProcess } from "../../testkit/pusher-process.js";
import type { Cleanup } from "./cleanup.js";
import { childPids, commName, rssMb } from "./proc.js";

/** Where the bench's pusher reads and writes (`env` names its KV sink). */
export interface BenchPusherOptions {
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly electionKey: string;
  readonly port: number;
  readonly cleanup: Cleanup;
  /** The system's pusher variables (`pusherEnv()`: the KV sink's) and the section's own. */
  readonly env: Readonly<Record<string, string>>;
  /** The systemd unit's variables (`deployedEnvironment`: heap bounds, malloc); default none. */
  readonly deployed?: Readonly<Record<string, string>>;
}

/**
 * The unit's variables as the knobs change them: BENCH_PUSHER_NODE_OPTIONS (even empty) replaces
 * its `NODE_OPTIONS`.
 */
export function benchPusherEnvironment(
  deployed: Readonly<Record<string, string>>,
  knobs: NodeJS.ProcessEnv,
): Record<string, string> {
  const env: Record<string, string> = { ...deployed };
  const options = knobs.BENCH_PUSHER_NODE_OPTIONS ?? env.NODE_OPTIONS;
  if (options) env.NODE_OPTIONS = options;
  else delete env.NODE_OPTIONS;
  return env;
}

/**
 * Starts the pusher the bench measures (`npm run bench` builds dist/ first: prebench), stopped by
 * `cleanup`; waits until it answers. BENCH_PUSHER_ENTRY, BENCH_PUSHER_NODE_ARGS,
 * BENCH_PUSHER_NODE_OPTIONS and BENCH_PUSHER_ENV (JSON) change how it runs, for
 * memory experiments.
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
      ...benchPusherEnvironment(o.deployed ?? {}, process.env),
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
