import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { etcdProductionVerdict } from "../../adapters/etcd-version-floor.js";
import { etcdVersionOf } from "../../testkit/etcd-choice.js";
import { alive, edgeGet, runStackScript, stackScriptEnv } from "../helpers/stack.js";

const READY_TIMEOUT = 240_000;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe("npm start (scripts/start-stack.ts)", () => {
  it("starts etcd, seeds, serves through the Worker, and SIGINT leaves no process behind", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-stack-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { env, ports } = await stackScriptEnv(dir, {
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
      DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
    });
    const script = runStackScript(env);
    cleanups.push(() => script.kill());
    let seen: { pid: number; cmd: string }[] = [];

    await script.waitForOutput("ready in", READY_TIMEOUT);
    const out = script.output();
    expect(out).toContain(`etcd: started at http://127.0.0.1:${ports.etcd}`);
    // the etcd it runs (the matrix's newest, as vitest chose), its version and production's verdict
    const version = etcdVersionOf(process.env.ETCD_BIN ?? "etcd");
    expect(version).toBeDefined();
    expect(out).toMatch(
      new RegExp(
        `etcd ${version?.replaceAll(".", "\\.")} from \\S+: production would ${etcdProductionVerdict(version ?? "").accepted ? "accept it" : "not"}`,
      ),
    );
    expect(out).toMatch(/seed: .* holds no routing intent/);
    for (const name of [
      "[edgectl]",
      "[origin fra-1]",
      "[heartbeat par-1]",
      "[pusher]",
      "[worker]",
    ]) {
      expect(out).toContain(name);
    }
    expect(out).toContain(`X-Edge-Debug-Token: ${env.EDGE_STACK_DEBUG_TOKEN}`);

    const res = await edgeGet(ports.worker, "DE");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(((await res.json()) as { pool: string }).pool).toBe("fra-1");

    seen = script.descendants();
    const cmds = seen.map((p) => p.cmd).join("\n");
    expect(cmds).toContain("etcd");
    expect(cmds).toContain("workerd");
    expect(cmds).toContain("edge-pusher.js");
    expect(cmds).toContain("demo-origin.ts");
    expect(cmds).toContain("edgectl.js observe --edge");
    // The debug token reaches wrangler through a private env file, never a command line.
    expect(cmds).not.toContain(String(env.EDGE_STACK_DEBUG_TOKEN));
    const secrets = join(String(env.EDGE_STACK_DATA_DIR), "worker.env");
    expect(statSync(secrets).mode & 0o777).toBe(0o600);

    process.kill(script.pid, "SIGINT");
    const exit = await script.exited;
    expect(exit.code, script.output().slice(-3000)).toBe(0);
    const survivors = seen.filter((p) => alive(p.pid));
    expect(survivors, JSON.stringify(survivors)).toEqual([]);
    expect(script.output()).toContain("stopped");
  }, 360_000);

  it("refuses to start, before starting anything, when one of its ports is taken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-stack-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const { env, ports } = await stackScriptEnv(dir, {
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
    });
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(ports.worker, "127.0.0.1", () => r()));
    cleanups.push(() => new Promise<void>((r) => blocker.close(() => r())));
    const script = runStackScript(env);
    cleanups.push(() => script.kill());
    const exit = await script.exited;
    expect(exit.code).toBe(1);
    expect(script.output()).toContain(
      `worker port ${ports.worker} is in use (set EDGE_STACK_WORKER_PORT`,
    );
    expect(script.output()).not.toContain("etcd: started");
  }, 60_000);
});
