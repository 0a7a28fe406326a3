import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { freePort } from "../../testkit/ports.js";
import { ObservationsEdge } from "../helpers/observations-edge.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
let etcd: EtcdServer | undefined;
const P = "/edge/routing/v1/";

const PASSWORDS = ["root-pw", "pusher-pw", "ctl-pw", "fra-pw"];
/** Scratch dir: an `etcdctl` shim that records every command line, and the credentials dir. */
const scratch = mkdtempSync(join(tmpdir(), "etcd-auth-sh-"));
const ARGV_LOG = join(scratch, "etcdctl-argv.log");
const OUT_DIR = join(scratch, "credentials");
let setup: { stdout: string; stderr: string } = { stdout: "", stderr: "" };

/** Runs deploy/etcd-auth.sh with the recording etcdctl first on PATH. */
function authScript(args: string[], env: Record<string, string>) {
  return run("bash", [resolve(ROOT, "deploy/etcd-auth.sh"), ...args], {
    env: { ...process.env, PATH: `${scratch}:${process.env.PATH}`, ...env },
  });
}

beforeAll(async () => {
  etcd = await startEtcd();
  const real = (await run("bash", ["-c", "command -v etcdctl"])).stdout.trim();
  writeFileSync(
    join(scratch, "etcdctl"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${ARGV_LOG}'\nexec '${real}' "$@"\n`,
  );
  chmodSync(join(scratch, "etcdctl"), 0o755);
  writeFileSync(ARGV_LOG, "");
  // The test etcd speaks plain http on loopback: --insecure is the only way the script runs.
  setup = await authScript(["--insecure", "--enable-auth", "--out-dir", OUT_DIR], {
    ETCDCTL_ENDPOINTS: etcd.endpoint,
    POOLS: "fra-1 ams-1",
    ROOT_PASSWORD: "root-pw",
    PUSHER_PASSWORD: "pusher-pw",
    EDGECTL_PASSWORD: "ctl-pw",
    HEALTH_PASSWORD_fra_1: "fra-pw",
  });
}, 60_000);

/** Process groups to kill after the file, even when a test timed out before its own cleanup. */
const groups: number[] = [];
afterAll(async () => {
  for (const pid of groups) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  await etcd?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** `etcdctl --user U:P ARGS`; resolves to whether etcd accepted it. */
async function as(user: string, password: string, ...args: string[]): Promise<boolean> {
  try {
    await run("etcdctl", ["--endpoints", etcd!.endpoint, "--user", `${user}:${password}`, ...args]);
    return true;
  } catch {
    return false;
  }
}

describe("deploy/etcd-auth.sh", () => {
  it("never puts a password on a command line or the terminal; a generated one lands in a 0600 file", async () => {
    const generatedFile = join(OUT_DIR, "edge-health-ams-1.password");
    const generated = readFileSync(generatedFile, "utf8").trim();
    expect(generated).toMatch(/^[A-Za-z0-9]{16,}$/);
    expect(statSync(generatedFile).mode & 0o777).toBe(0o600);
    expect(statSync(OUT_DIR).mode & 0o777).toBe(0o700);
    // Only the generated password gets a file: the supplied ones are the operator's already.
    expect(() => statSync(join(OUT_DIR, "edge-health-fra-1.password"))).toThrow();

    const argv = readFileSync(ARGV_LOG, "utf8");
    expect(argv).toContain("user add edge-health-ams-1 --interactive=false");
    for (const pw of [...PASSWORDS, generated]) {
      expect(argv).not.toContain(pw);
      expect(setup.stdout + setup.stderr).not.toContain(pw);
    }
    expect(setup.stdout).toContain(generatedFile);
    // And the generated password is the one etcd holds.
    expect(await as("edge-health-ams-1", generated, "put", `${P}health/ams-1`, "{}")).toBe(true);
    expect(await as("root", "root-pw", "del", `${P}health/ams-1`)).toBe(true);
  });

  it("refuses a non-https endpoint without --insecure, before calling etcdctl", async () => {
    const before = readFileSync(ARGV_LOG, "utf8");
    const refused = await authScript([], { ETCDCTL_ENDPOINTS: etcd!.endpoint }).then(
      () => null,
      (e: { code?: number; stderr?: string }) => e,
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stderr).toContain(`endpoint "${etcd!.endpoint}" is not https://`);
    expect(readFileSync(ARGV_LOG, "utf8")).toBe(before);
  });

  it("enables auth with least-privilege roles; the real heartbeat works with its pool's role", async () => {
    // Auth is on: anonymous requests are refused.
    await expect(run("etcdctl", ["--endpoints", etcd!.endpoint, "get", P])).rejects.toThrow();

    expect(await as("edgectl", "ctl-pw", "put", `${P}country/DE`, "{}")).toBe(true);
    expect(await as("edgectl", "ctl-pw", "put", "/elsewhere", "x")).toBe(false);

    expect(await as("edge-pusher", "pusher-pw", "get", "--prefix", P)).toBe(true);
    expect(await as("edge-pusher", "pusher-pw", "put", `${P}country/DE`, "{}")).toBe(false);
    expect(await as("edge-pusher", "pusher-pw", "put", "/edge/pusher/v1/leader/1", "x")).toBe(true);
    // A lease-less candidate key would win every later election: remove it again.
    expect(await as("edge-pusher", "pusher-pw", "del", "/edge/pusher/v1/leader/1")).toBe(true);

    expect(await as("edge-health-fra-1", "fra-pw", "put", `${P}health/fra-1`, "{}")).toBe(true);
    expect(await as("edge-health-fra-1", "fra-pw", "put", `${P}health/ams-1`, "{}")).toBe(false);
    expect(await as("edge-health-fra-1", "fra-pw", "put", `${P}country/DE`, "{}")).toBe(false);
    expect(await as("root", "root-pw", "get", "--prefix", P)).toBe(true);

    // The real `edgectl heartbeat` works with nothing more than its pool's role.
    const hb = spawn(
      process.execPath,
      [resolve(ROOT, "bin/edgectl.js"), "heartbeat", "fra-1", "--ttl", "5"],
      {
        env: {
          ...process.env,
          ETCD_ENDPOINTS: etcd!.endpoint,
          ETCD_USERNAME: "edge-health-fra-1",
          ETCD_PASSWORD: "fra-pw",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let log = "";
    hb.stdout.on("data", (d: Buffer) => {
      log += d.toString();
    });
    hb.stderr.on("data", (d: Buffer) => {
      log += d.toString();
    });
    const exited = new Promise<number | null>((done) => hb.once("exit", (code) => done(code)));
    try {
      const rootGet = () =>
        run("etcdctl", [
          "--endpoints",
          etcd!.endpoint,
          "--user",
          "root:root-pw",
          "get",
          `${P}health/fra-1`,
          "--print-value-only",
        ]);
      const deadline = Date.now() + 30_000;
      while (!(await rootGet()).stdout.includes("healthy")) {
        if (Date.now() > deadline || hb.exitCode !== null)
          throw new Error(`no health/fra-1:\n${log}`);
        await sleep(200);
      }
      hb.kill("SIGTERM");
      expect(await exited, log).toBe(0);
      // Revoking its own lease is allowed: the key is gone at once.
      expect((await rootGet()).stdout.trim()).toBe("");
    } finally {
      hb.kill("SIGKILL");
    }
  });

  it("the real pusher runs as edge-pusher: reads the prefix, wins the election, pushes", async () => {
    expect(
      await as(
        "edgectl",
        "ctl-pw",
        "put",
        `${P}pool/ams-1`,
        '{"origin":"https://ams-1.example.net"}',
      ),
    ).toBe(true);
    expect(
      await as(
        "edgectl",
        "ctl-pw",
        "put",
        `${P}country/_default`,
        '{"primary":"ams-1","fallbacks":[]}',
      ),
    ).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "edge-auth-"));
    const port = await freePort();
    const pusher = spawn(process.execPath, [resolve(ROOT, "bin/edge-pusher.js")], {
      cwd: ROOT,
      env: {
        ...process.env,
        ETCD_ENDPOINTS: etcd!.endpoint,
        ETCD_USERNAME: "edge-pusher",
        ETCD_PASSWORD: "pusher-pw",
        KV_SINK: "local",
        KV_LOCAL_PERSIST: join(dir, "state"),
        PUSHER_LISTEN: `127.0.0.1:${port}`,
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    if (pusher.pid) groups.push(pusher.pid);
    let plog = "";
    pusher.stdout.on("data", (d: Buffer) => {
      plog += d.toString();
    });
    pusher.stderr.on("data", (d: Buffer) => {
      plog += d.toString();
    });
    try {
      const deadline = Date.now() + 40_000;
      let status: { role?: string; pushed_revision?: number | null } = {};
      while (!(status.role === "leader" && typeof status.pushed_revision === "number")) {
        if (Date.now() > deadline || pusher.exitCode !== null)
          throw new Error(`pusher never pushed:\n${plog}`);
        await sleep(300);
        status = await fetch(`http://127.0.0.1:${port}/status`)
          .then((r) => r.json() as Promise<typeof status>)
          .catch(() => ({}));
      }
      expect(plog).not.toContain("pusher-pw");
    } finally {
      try {
        process.kill(-(pusher.pid ?? 0), "SIGKILL");
      } catch {
        // gone
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("edge-observer may write observed/ and, as the canary's judge, what ending a canary writes; never health/, fence/ or override/; the real observer works with nothing more", async () => {
    const pw = readFileSync(join(OUT_DIR, "edge-observer.password"), "utf8").trim();
    expect(await as("edge-observer", pw, "put", `${P}observed/BR/us-east`, "{}")).toBe(true);
    expect(await as("edge-observer", pw, "del", `${P}observed/BR/us-east`)).toBe(true);
    expect(await as("edge-observer", pw, "put", `${P}health/fra-1`, "{}")).toBe(false);
    expect(await as("edge-observer", pw, "put", `${P}observedX`, "{}")).toBe(false);
    expect(await as("edge-observer", pw, "put", `${P}fence/eu`, "{}")).toBe(false);
    expect(await as("edge-observer", pw, "put", `${P}override/DE`, "{}")).toBe(false);
    // a canary's judge: its judgement, and promotion's commit (docs/reference.md §13)
    expect(await as("edge-observer", pw, "put", `${P}canary/judgement`, "{}")).toBe(true);
    expect(await as("edge-observer", pw, "del", `${P}canary/judgement`)).toBe(true);
    expect(await as("edge-observer", pw, "put", `${P}country/DE`, "{}")).toBe(true);
    expect(await as("edge-observer", pw, "del", `${P}country/DE`)).toBe(true);

    const edge = await new ObservationsEdge("obs-token").start();
    edge.setTtfb("BR", "us-east", { p50: 100, p90: 200, p99: 300 });
    const observer = spawn(
      process.execPath,
      [resolve(ROOT, "bin/edgectl.js"), "observe", "--edge", edge.url, "--interval", "0.2"],
      {
        env: {
          ...process.env,
          ETCD_ENDPOINTS: etcd!.endpoint,
          ETCD_USERNAME: "edge-observer",
          ETCD_PASSWORD: pw,
          OBSERVE_TOKEN: "obs-token",
        },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      },
    );
    if (observer.pid) groups.push(observer.pid);
    let log = "";
    observer.stdout.on("data", (d: Buffer) => {
      log += d.toString();
    });
    observer.stderr.on("data", (d: Buffer) => {
      log += d.toString();
    });
    try {
      await sleep(500);
      edge.record("BR", "us-east", { outcomes: { ok: 60 } });
      const observed = () =>
        run("etcdctl", [
          "--endpoints",
          etcd!.endpoint,
          "--user",
          "root:root-pw",
          "get",
          `${P}observed/BR/us-east`,
          "--print-value-only",
        ]).then(
          (r) => r.stdout,
          () => "",
        );
      const deadline = Date.now() + 20_000;
      while (!(await observed()).includes('"samples":60')) {
        if (Date.now() > deadline || observer.exitCode !== null)
          throw new Error(`observer never wrote:\n${log}`);
        await sleep(300);
      }
      expect(log).not.toContain(pw);
      expect(log).not.toContain("obs-token");
    } finally {
      try {
        process.kill(-(observer.pid ?? 0), "SIGKILL");
      } catch {
        // gone
      }
      await edge.stop();
    }
  });
});
