import type { ChildProcess } from "node:child_process";
import type { Etcd3 } from "etcd3";
import { type StatusServer, startStatusServer } from "../../../pusher/http-server.js";
import { createUiHandler } from "../../../pusher/ui/ui-handler.js";
import { spawnBin, waitFor } from "../../edgectl/cli-harness.js";
import { type PusherUnderTest, startPusher } from "../harness.js";

/** A real pusher (memory KV, as the pusher suites use) serving `/ui` on a loopback port. */
export interface UiPusher {
  readonly p: PusherUnderTest;
  readonly server: StatusServer;
  /** `http://127.0.0.1:PORT` */
  readonly base: string;
  stop(): Promise<void>;
}

/** Starts a pusher on `endpoint` and its status listener with the `/ui` handler, as main.ts does. */
export async function startUiPusher(o: {
  readonly endpoint: string;
  readonly prefix: string;
  readonly electionKey: string;
  readonly id?: string;
}): Promise<UiPusher> {
  const p = startPusher(o);
  const ui = createUiHandler({ status: p.pusher.status, routing: p.pusher.routing });
  const server = await startStatusServer({
    host: "127.0.0.1",
    port: 0,
    status: p.pusher.status,
    metrics: p.pusher.metrics,
    ui,
  });
  let stopped = false;
  return {
    p,
    server,
    base: `http://127.0.0.1:${server.port}`,
    async stop() {
      if (stopped) return;
      stopped = true;
      ui.close();
      await server.close();
      await p.stop();
    },
  };
}

/** `edgectl heartbeat POOL` child processes (the real bin), killed at the end. */
export class Heartbeats {
  private readonly children = new Map<string, ChildProcess>();
  private readonly output = new Map<string, string>();

  constructor(
    private readonly env: Record<string, string>,
    private readonly client: Etcd3,
    private readonly prefix: string,
  ) {}

  /** Starts a heartbeat per pool and waits until each `health/POOL` key exists. */
  async start(pools: readonly string[], ttl: number, interval: number): Promise<void> {
    for (const pool of pools) {
      const child = spawnBin(
        ["heartbeat", pool, "--ttl", String(ttl), "--interval", String(interval)],
        this.env,
      );
      this.output.set(pool, "");
      const keep = (d: Buffer) => this.output.set(pool, `${this.output.get(pool)}${d}`);
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      this.children.set(pool, child);
    }
    for (const pool of pools) {
      const up = await waitFor(
        async () => (await this.client.get(`${this.prefix}health/${pool}`).string()) !== null,
        45_000,
      );
      if (!up) throw new Error(`heartbeat ${pool} never registered: ${this.output.get(pool)}`);
    }
  }

  /** SIGKILLs one heartbeat (no revoke: its lease must expire) and waits for it to exit. */
  async kill(pool: string): Promise<void> {
    const child = this.children.get(pool);
    if (!child) throw new Error(`no heartbeat for ${pool}`);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    this.children.delete(pool);
  }

  /** Kills every heartbeat still running. */
  stopAll(): void {
    for (const c of this.children.values()) {
      if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
    }
    this.children.clear();
  }
}
