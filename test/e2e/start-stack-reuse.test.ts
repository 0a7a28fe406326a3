import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startEtcd } from "../../testkit/etcd.js";
import { alive, edgeGet, runStackScript, stackScriptEnv } from "../helpers/stack.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("npm start against an etcd that is already running", () => {
  it("reuses it without re-seeding, exits 1 naming a component that dies, and leaves etcd up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-stack-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const etcd = await startEtcd();
    cleanups.push(() => etcd.stop());
    const { env, ports } = await stackScriptEnv(dir, {
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
      DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
    });
    env.EDGE_STACK_ETCD_PORT = String(etcd.clientPort);
    // Intent already in etcd (DE → par-1) must win over the seed file (DE → fra-1).
    const pools = ["fra-1", "ams-1", "par-1"] as const;
    for (const p of pools) {
      etcd.ctl(
        "put",
        `/edge/routing/v1/pool/${p}`,
        JSON.stringify({ origin: `http://127.0.0.1:${ports[p]}` }),
      );
    }
    etcd.ctl(
      "put",
      "/edge/routing/v1/country/_default",
      JSON.stringify({ primary: "ams-1", fallbacks: [] }),
    );
    etcd.ctl(
      "put",
      "/edge/routing/v1/country/DE",
      JSON.stringify({ primary: "par-1", fallbacks: [] }),
    );

    const script = runStackScript(env);
    cleanups.push(() => script.kill());
    let seen: { pid: number; cmd: string }[] = [];
    await script.waitForOutput("ready in", 240_000);
    expect(script.output()).toContain(`reusing the etcd already running at ${etcd.endpoint}`);
    expect(script.output()).toMatch(/already holds \d+ intent keys/);
    const res = await edgeGet(ports.worker, "DE");
    expect(res.headers.get("x-edge-pool")).toBe("par-1");
    await res.body?.cancel();

    seen = script.descendants();
    const pusher = seen.find((p) => p.cmd.includes("edge-pusher.js"));
    expect(pusher).toBeDefined();
    process.kill(pusher!.pid, "SIGKILL");
    const exit = await script.exited;
    expect(exit.code).toBe(1);
    expect(script.output()).toContain("pusher killed by SIGKILL");
    const survivors = seen.filter((p) => alive(p.pid));
    expect(survivors, JSON.stringify(survivors)).toEqual([]);
    // The reused etcd is not the stack's to stop.
    const health = await fetch(`${etcd.endpoint}/health`);
    expect(((await health.json()) as { health: string }).health).toBe("true");
  }, 360_000);
});
