import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { compactJsonLine } from "../../scripts/stack/compact-json.js";
import { observerSpec, writeWorkerSecrets } from "../../scripts/stack/components.js";
import { stackConfigFromEnv } from "../../scripts/stack/config.js";
import { startDemoOrigin } from "../../scripts/stack/demo-origin-server.js";
import { PrefixedOutput } from "../../scripts/stack/output.js";
import { localPools, readSeed } from "../../scripts/stack/seed.js";
import { Supervisor } from "../../scripts/stack/supervisor.js";
import { alive } from "../helpers/stack.js";

const ROOT = new URL("../..", import.meta.url).pathname;

describe("local stack parts", () => {
  it("reads EDGE_STACK_* overrides and rejects bad ports; the debug token is random per run", () => {
    const a = stackConfigFromEnv({}, { root: "/r", isTty: false });
    const b = stackConfigFromEnv({}, { root: "/r", isTty: true });
    expect(a.etcdPort).toBe(2379);
    expect(a.workerPort).toBe(8787);
    expect(a.etcdDataDir).toBe("/r/.data/etcd");
    expect(a.persistDir).toBe("/r/.wrangler/state");
    expect(a.debugToken).toMatch(/^[0-9a-f]{32}$/);
    expect(a.debugToken).not.toBe(b.debugToken);
    expect(a.observeToken).toMatch(/^[0-9a-f]{32}$/);
    expect(a.observeToken).not.toBe(b.observeToken);
    expect(a.observerPort).toBe(9466);
    const c = stackConfigFromEnv(
      { EDGE_STACK_ETCD_PORT: "23790", EDGE_STACK_DATA_DIR: "/tmp/x", NO_COLOR: "1" },
      { root: "/r", isTty: true },
    );
    expect(c.etcdPort).toBe(23790);
    expect(c.etcdDataDir).toBe("/tmp/x/etcd");
    expect(c.colour).toBe(false);
    expect(() =>
      stackConfigFromEnv({ EDGE_STACK_WORKER_PORT: "http" }, { root: "/r", isTty: false }),
    ).toThrow(/EDGE_STACK_WORKER_PORT/);
  });

  it("the Worker's secrets file holds both tokens (0600); the observer gets its token through the environment", () => {
    const dir = mkdtempSync(join(tmpdir(), "stack-secrets-"));
    try {
      const cfg = stackConfigFromEnv({ EDGE_STACK_DATA_DIR: dir }, { root: ROOT, isTty: false });
      writeWorkerSecrets(cfg);
      const file = join(dir, "worker.env");
      expect(readFileSync(file, "utf8")).toBe(
        `DEBUG_TOKEN=${cfg.debugToken}\nOBSERVE_TOKEN=${cfg.observeToken}\n`,
      );
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const spec = observerSpec(cfg, "http://127.0.0.1:2379");
      expect(spec.args).toContain("observe");
      expect(spec.args.join(" ")).not.toContain(cfg.observeToken);
      expect(spec.env.OBSERVE_TOKEN).toBe(cfg.observeToken);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("examples/local.yaml is valid and names one loopback origin per pool", () => {
    const seed = readSeed(`${ROOT}examples/local.yaml`);
    expect(localPools(seed).map((p) => `${p.pool}:${p.port}`)).toEqual([
      "fra-1:9101",
      "ams-1:9102",
      "par-1:9103",
    ]);
    expect(seed.countries.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    expect(seed.countries._default).toEqual({ primary: "ams-1", fallbacks: ["par-1"] });
    const prod = readSeed(`${ROOT}examples/routing.yaml`);
    expect(localPools(prod)).toEqual([]);
    expect(Object.values(prod.pools).every((p) => p.origin.startsWith("https://"))).toBe(true);
  });

  it("compacts JSON log lines and leaves other text alone", () => {
    expect(
      compactJsonLine(
        '{"level":40,"time":1,"pid":2,"hostname":"h","msg":"KV write failed","attempt":2,"error":"x y"}',
      ),
    ).toBe('WARN KV write failed attempt=2 error="x y"');
    expect(compactJsonLine('{"time":"t","event":"registered","pool":"fra-1"}')).toBe(
      "registered pool=fra-1",
    );
    expect(compactJsonLine("[wrangler:info] Ready")).toBe("[wrangler:info] Ready");
    expect(compactJsonLine("{not json")).toBe("{not json");
  });

  it("the demo origin reports its pool, path and X-Edge-* headers; /healthz can be flipped", async () => {
    const o = await startDemoOrigin({ pool: "fra-1", port: 0 });
    try {
      const r = await fetch(`${o.url}/a/b?c=1`, {
        headers: { "X-Edge-Pool": "fra-1", "X-Other": "no" },
      });
      expect(await r.json()).toEqual({
        pool: "fra-1",
        method: "GET",
        path: "/a/b",
        query: "?c=1",
        headers: { "x-edge-pool": "fra-1" },
      });
      expect((await fetch(`${o.url}/healthz`)).status).toBe(200);
      await (await fetch(`${o.url}/__demo/health/down`, { method: "POST" })).text();
      expect((await fetch(`${o.url}/healthz`)).status).toBe(503);
    } finally {
      await o.close();
    }
    await expect(fetch(`${o.url}/`)).rejects.toThrow();
  });

  it("the supervisor prefixes output, reports an unexpected exit and stops grandchildren", async () => {
    const sink = new PassThrough();
    let text = "";
    sink.on("data", (d: Buffer) => {
      text += d.toString();
    });
    const died: string[] = [];
    const sup = new Supervisor(new PrefixedOutput(sink, false), (m, info) =>
      died.push(`${m.name}:${info.code}`),
    );
    const env = process.env;
    // sh exits on SIGTERM, but its background `sleep` (same process group) would survive it.
    const parent = sup.spawn({
      name: "parent",
      command: "sh",
      args: ["-c", "sleep 300 & echo grandchild $!; wait"],
      env,
      cwd: ROOT,
    });
    sup.spawn({ name: "quitter", command: "sh", args: ["-c", "echo bye; exit 3"], env, cwd: ROOT });
    const deadline = Date.now() + 10_000;
    while ((!/grandchild (\d+)/.test(text) || died.length === 0) && Date.now() < deadline) {
      await sleep(50);
    }
    expect(died).toEqual(["quitter:3"]);
    expect(text).toContain("[quitter]");
    const grandchild = Number(/grandchild (\d+)/.exec(text)?.[1]);
    expect(alive(grandchild)).toBe(true);
    await sup.stopAll(2_000);
    expect(parent.done).toBe(true);
    expect(alive(grandchild)).toBe(false);
    expect(died).toEqual(["quitter:3"]);
  });
});
