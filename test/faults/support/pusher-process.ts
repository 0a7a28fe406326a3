import { type PusherProcess, startPusherProcess } from "../../../testkit/pusher-process.js";
import type { FaultContext } from "../scenario.js";

/** Options for one scenario's pusher. */
export interface ScenarioPusherOptions {
  readonly id: string;
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly electionKey: string;
  readonly electionTtl?: number;
  readonly kvEnv: Record<string, string>;
  readonly extraEnv?: Record<string, string>;
}

/**
 * Starts the real pusher for a scenario: its output and every answer of its listener go to the
 * transcript, and it is stopped (SIGTERM, then SIGKILL) with the scenario.
 */
export async function startScenarioPusher(
  ctx: FaultContext,
  o: ScenarioPusherOptions,
): Promise<PusherProcess> {
  const pusher = await startPusherProcess({
    id: o.id,
    etcdEndpoint: o.etcdEndpoint,
    prefix: o.prefix,
    electionKey: o.electionKey,
    electionTtl: o.electionTtl ?? 10,
    env: {
      NODE_ENV: "production",
      HEARTBEAT_SECONDS: "5",
      // Anti-entropy every 10 s, so reconciles meet the stand-in's stale reads in every scenario.
      RESYNC_SECONDS: "10",
      ORIGIN_TEMPLATE: "https://{pool}.origin.example.com",
      FLOOR_POOL: "par-1",
      ...o.kvEnv,
      ...o.extraEnv,
    },
    onOutput: (text) => ctx.transcript.add(`pusher ${o.id}`, "log", text),
    onResponse: (path, body) => {
      const kind = path === "/metrics" ? "metrics" : path === "/status" ? "status" : "healthz";
      ctx.transcript.add(`pusher ${o.id} ${path}`, kind, body);
    },
  });
  ctx.defer(() => pusher.stop());
  return pusher;
}
