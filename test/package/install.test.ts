import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { type InstalledPackage, installPackage } from "../../testkit/installed-package.js";
import { type KvStandin, startKvStandin } from "../../testkit/kv-standin.js";
import { freePort } from "../../testkit/ports.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
/** Packages a production install must not contain: the TypeScript loader and the local runtime. */
const DEV_ONLY = ["tsx", "miniflare", "workerd", "wrangler", "esbuild", "node"];

let installed: InstalledPackage | undefined;
let etcd: EtcdServer | undefined;
let kv: KvStandin | undefined;
const children: ChildProcess[] = [];

/** Every package directory name anywhere under node_modules (scoped ones as `@scope/name`). */
function installedPackages(dir: string, found = new Set<string>()): Set<string> {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name === ".bin") continue;
    if (entry.name.startsWith("@")) {
      for (const scoped of readdirSync(join(dir, entry.name))) {
        found.add(`${entry.name}/${scoped}`);
        installedPackages(join(dir, entry.name, scoped, "node_modules"), found);
      }
    } else {
      found.add(entry.name);
      installedPackages(join(dir, entry.name, "node_modules"), found);
    }
  }
  return found;
}

/** Runs an installed bin (through its node_modules/.bin link) to completion. */
async function bin(name: "edgectl" | "edge-pusher", args: string[], env: Record<string, string>) {
  const path = installed!.bin(name);
  try {
    const { stdout, stderr } = await run(process.execPath, [path, ...args], {
      cwd: installed!.dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: installed!.dir, ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
  }
}

beforeAll(async () => {
  [installed, etcd, kv] = await Promise.all([installPackage(), startEtcd(), startKvStandin()]);
}, 300_000);

afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await Promise.all([etcd?.stop(), kv?.close()]);
  installed?.remove();
});

describe("the npm package, installed with production dependencies only", () => {
  it("holds the bundles and no tsx, miniflare, workerd or other development tool", () => {
    const pkg = join(installed!.prefix, "node_modules/edge-router");
    expect(existsSync(join(pkg, "dist/edge-pusher.js"))).toBe(true);
    expect(existsSync(join(pkg, "dist/edgectl.js"))).toBe(true);
    // The packages' code ships inside dist/, so their license texts do too.
    const licenses = readFileSync(join(pkg, "dist/THIRD_PARTY_LICENSES"), "utf8");
    expect(licenses).toMatch(/^cloudflare@\d+\.\d+\.\d+ \(Apache-2\.0\)$/m);
    expect(licenses).toMatch(/^etcd3@\d+\.\d+\.\d+ \(MIT\)$/m);
    expect(licenses).toMatch(/^@grpc\/grpc-js@\d+\.\d+\.\d+ \(Apache-2\.0\)$/m);
    expect(licenses).toMatch(/^zod@\d+\.\d+\.\d+ \(MIT\)$/m);
    expect(licenses).toContain("Apache License");
    // Sources, tests and benchmarks stay in the repository.
    for (const dir of ["pusher", "edgectl", "core", "adapters", "worker", "test", "bench"]) {
      expect(existsSync(join(pkg, dir)), dir).toBe(false);
    }
    // Every package the bins load is bundled: the install holds the package and nothing else.
    const packages = installedPackages(join(installed!.prefix, "node_modules"));
    expect([...packages]).toEqual(["edge-router"]);
    for (const name of DEV_ONLY) expect(packages.has(name), name).toBe(false);
  });

  it("edgectl validates and applies; edge-pusher pushes to the Cloudflare API; edgectl status agrees", async () => {
    const desired = join(installed!.dir, "routing.yaml");
    copyFileSync(join(ROOT, "examples/routing.yaml"), desired);
    const etcdEnv = { ETCD_ENDPOINTS: etcd!.endpoint };

    const help = await bin("edgectl", ["--help"], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: edgectl");

    const validate = await bin("edgectl", ["validate", desired], etcdEnv);
    expect(validate.code, validate.stderr).toBe(0);
    const apply = await bin("edgectl", ["apply", desired, "--yes"], etcdEnv);
    expect(apply.code, apply.stderr).toBe(0);

    const port = await freePort();
    const kvEnv = {
      KV_SINK: "cloudflare",
      CF_API_BASE_URL: kv!.url,
      CF_ACCOUNT_ID: kv!.accountId,
      CF_API_TOKEN: kv!.token,
      KV_NAMESPACE_ID: kv!.namespaceId,
    };
    const pusher = spawn(process.execPath, [installed!.bin("edge-pusher")], {
      cwd: installed!.dir,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        ...etcdEnv,
        ...kvEnv,
        PUSHER_LISTEN: `127.0.0.1:${port}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(pusher);
    let log = "";
    pusher.stdout?.on("data", (d: Buffer) => (log += d.toString()));
    pusher.stderr?.on("data", (d: Buffer) => (log += d.toString()));

    const deadline = Date.now() + 30_000;
    while (!kv!.values.has("routes") || !kv!.values.has("meta")) {
      if (Date.now() > deadline || pusher.exitCode !== null)
        throw new Error(`the installed pusher never pushed:\n${log}`);
      await sleep(200);
    }
    const routes = JSON.parse(kv!.values.get("routes") ?? "{}") as {
      countries?: Record<string, unknown>;
    };
    expect(Object.keys(routes.countries ?? {})).toContain("DE");
    expect(log).not.toContain(kv!.token);

    const status = await bin("edgectl", ["status", "--pusher", `http://127.0.0.1:${port}`], {
      ...etcdEnv,
      ...kvEnv,
    });
    expect(status.code, status.stdout + status.stderr).toBe(0);

    pusher.kill("SIGTERM");
    const code = await new Promise<number | null>((r) =>
      pusher.exitCode !== null ? r(pusher.exitCode) : pusher.once("exit", (c) => r(c)),
    );
    expect(code, log).toBe(0);
  }, 90_000);

  it("exports verifyEdgeSignature for Node origins, and ships the PHP verifier's doc", async () => {
    const script = `
      import { signEdgeRequest, verifyEdgeSignature } from "edge-router";
      const f = { t: Math.floor(Date.now() / 1000), method: "GET", host: "v.example", pathAndQuery: "/a?b=1",
        pool: "fra-1", country: "DE", revision: "7", attrs: [] };
      const headers = { "X-Edge-Signature": await signEdgeRequest(f, ["k"]), "X-Forwarded-Host": "v.example",
        "X-Edge-Pool": "fra-1", "X-Edge-Country": "DE", "X-Edge-Revision": "7" };
      const req = new Request("http://10.1.2.3/a?b=1", { headers });
      console.log(JSON.stringify([await verifyEdgeSignature(req, ["k"]), await verifyEdgeSignature(req, ["x"])]));
    `;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: installed!.prefix,
      timeout: 30_000,
    });
    expect(JSON.parse(stdout)).toEqual([true, false]);
    expect(
      existsSync(join(installed!.prefix, "node_modules/edge-router/docs/origin-verification.md")),
    ).toBe(true);
  });

  it("the local KV sink says what to install instead of failing on a missing module", async () => {
    const r = await bin("edge-pusher", [], {
      ETCD_ENDPOINTS: etcd!.endpoint,
      KV_SINK: "local",
      KV_NAMESPACE_ID: "local-test",
      KV_LOCAL_PERSIST: join(installed!.dir, "state"),
      PUSHER_LISTEN: `127.0.0.1:${await freePort()}`,
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("KV_SINK");
    expect(r.stderr).toContain("npm install miniflare@");
    expect(r.stderr).toContain("KV_SINK=cloudflare");
    expect(r.stderr).not.toContain("ERR_MODULE_NOT_FOUND");
  });
});
