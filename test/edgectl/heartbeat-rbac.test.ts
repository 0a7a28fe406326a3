import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { type OwnedProcess, spawnOwned } from "../../testkit/owned-process.js";

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const UNIT = resolve(ROOT, "deploy/edge-heartbeat@.service");
const INSTALLED = "/opt/edge-router/node_modules/edge-router";
const P = "/edge/routing/v1/";
const PASSWORDS: Record<string, string> = { "fra-1": "fra-pw", "ams-1": "ams-pw" };
const SITES = ["site-a", "site-b", "site-c"];
/** The unit's variables as the test sets them: a short TTL, checks every second, no HTTP check. */
const UNIT_ENV: Record<string, string> = {
  HEARTBEAT_TTL: "5",
  HEARTBEAT_INTERVAL: "1",
  CHECK_ARGS: "",
};

let etcd: EtcdServer;
const scratch = mkdtempSync(join(tmpdir(), "heartbeat-rbac-"));
const running: OwnedProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  await exec(
    "bash",
    [
      resolve(ROOT, "deploy/etcd-auth.sh"),
      "--insecure",
      "--enable-auth",
      "--out-dir",
      join(scratch, "out"),
    ],
    {
      env: {
        ...process.env,
        ETCDCTL_ENDPOINTS: etcd.endpoint,
        POOLS: "fra-1 ams-1",
        ROOT_PASSWORD: "root-pw",
        PUSHER_PASSWORD: "pusher-pw",
        EDGECTL_PASSWORD: "ctl-pw",
        HEALTH_PASSWORD_fra_1: PASSWORDS["fra-1"],
        HEALTH_PASSWORD_ams_1: PASSWORDS["ams-1"],
      },
    },
  );
}, 60_000);
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop(2_000)));
  await etcd?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Whether `etcdctl` as USER may run ARGS. */
async function may(user: string, password: string, ...args: string[]): Promise<boolean> {
  try {
    await exec("etcdctl", ["--endpoints", etcd.endpoint, "--user", `${user}:${password}`, ...args]);
    return true;
  } catch {
    return false;
  }
}

/** The health keys etcd holds, with their values, read as root. */
async function healthKeys(): Promise<Map<string, string>> {
  const { stdout } = await exec("etcdctl", [
    "--endpoints",
    etcd.endpoint,
    "--user",
    "root:root-pw",
    "get",
    "--prefix",
    `${P}health/`,
  ]);
  const lines = stdout.split("\n").filter(Boolean);
  const out = new Map<string, string>();
  for (let i = 0; i + 1 < lines.length; i += 2) out.set(lines[i] ?? "", lines[i + 1] ?? "");
  return out;
}

/**
 * The unit's ExecStart for one instance, as systemd would run it: `%i` is the instance, the
 * installed package is this checkout, HEARTBEAT_TTL 5 and HEARTBEAT_INTERVAL 1, no CHECK_ARGS.
 */
function execStart(instance: string): string[] {
  const line = /^ExecStart=(.*)$/m.exec(readFileSync(UNIT, "utf8"))?.[1];
  if (!line) throw new Error(`${UNIT} has no ExecStart`);
  return line
    .replaceAll(INSTALLED, ROOT)
    .replaceAll("/usr/bin/node", process.execPath)
    .replaceAll("%i", instance)
    .replace(/\$\{?(\w+)\}?/g, (_, name: string) => UNIT_ENV[name] ?? "")
    .split(" ")
    .filter(Boolean);
}

/** Starts the unit's command for `instance` with its pool's password as a systemd credential. */
function startInstance(instance: string, pool: string): OwnedProcess {
  const credentials = join(scratch, "credentials", instance);
  mkdirSync(credentials, { recursive: true });
  writeFileSync(join(credentials, "ETCD_PASSWORD"), `${PASSWORDS[pool]}\n`, { mode: 0o600 });
  const [command, ...args] = execStart(instance);
  const p = spawnOwned(instance, command ?? "", args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      CREDENTIALS_DIRECTORY: credentials,
      ETCD_ENDPOINTS: etcd.endpoint,
      ETCD_USERNAME: `edge-health-${pool}`,
    },
  });
  running.push(p);
  return p;
}

describe("deploy/etcd-auth.sh and edge-heartbeat@.service: several checkers per pool under RBAC", () => {
  it("runs three checkers per pool, each as edge-heartbeat@POOL_CHECKER with only its pool's role", async () => {
    const checkers = ["fra-1", "ams-1"].flatMap((pool) =>
      SITES.map((site) => ({
        pool,
        key: `${P}health/${pool}/${site}`,
        instance: `${pool}_${site}`,
      })),
    );
    const procs = checkers.map((c) => startInstance(c.instance, c.pool));
    const deadline = Date.now() + 40_000;
    let keys = await healthKeys();
    while (!checkers.every((c) => keys.get(c.key)?.includes('"healthy"'))) {
      const dead = procs.find((p) => !p.alive());
      if (dead || Date.now() > deadline) {
        const who = dead ?? procs[0];
        throw new Error(`not all checkers registered (${[...keys.keys()]}):\n${who?.output()}`);
      }
      await sleep(200);
      keys = await healthKeys();
    }
    expect([...keys.keys()].sort()).toEqual(checkers.map((c) => c.key).sort());

    for (const p of procs) p.signal("SIGTERM");
    const exits = await Promise.all(procs.map((p) => p.exited));
    expect(exits.map((e) => e.code)).toEqual(procs.map(() => 0));
    // Each revoked its own lease on the way out: the keys are gone at once.
    expect([...(await healthKeys()).keys()]).toEqual([]);
  }, 90_000);

  it("a pool's role writes its own key and its checkers' keys, and no other pool's", async () => {
    const fra = ["edge-health-fra-1", PASSWORDS["fra-1"] ?? ""] as const;
    expect(await may(...fra, "put", `${P}health/fra-1`, "{}")).toBe(true);
    expect(await may(...fra, "put", `${P}health/fra-1/site-d`, "{}")).toBe(true);
    expect(await may(...fra, "put", `${P}health/ams-1/site-a`, "{}")).toBe(false);
    // health/fra-1/ is the checkers' prefix; health/fra-10 is another pool's key.
    expect(await may(...fra, "put", `${P}health/fra-10`, "{}")).toBe(false);
    expect(await may(...fra, "put", `${P}health/fra-1x/site-a`, "{}")).toBe(false);
    expect(await may(...fra, "put", `${P}pool/fra-1`, "{}")).toBe(false);
    expect(await may("root", "root-pw", "del", "--prefix", `${P}health/`)).toBe(true);
  });

  it("the unit's instance name is the pool, or the pool and the checker joined by _", async () => {
    const argv = async (instance: string) =>
      (
        await exec("sh", [
          resolve(ROOT, "deploy/heartbeat-instance.sh"),
          instance,
          "printf",
          "%s\n",
          "--ttl",
          "15",
        ])
      ).stdout.split("\n");
    expect(await argv("fra-1")).toEqual(["heartbeat", "fra-1", "--ttl", "15", ""]);
    expect(await argv("fra-1_site-a")).toEqual([
      "heartbeat",
      "fra-1",
      "--checker",
      "site-a",
      "--ttl",
      "15",
      "",
    ]);
  });
});
