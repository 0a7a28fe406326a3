import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { startTlsEtcd, type TlsEtcd } from "../helpers/tls-etcd.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const SCRIPT = resolve(ROOT, "deploy/etcd-auth.sh");
const P = "/edge/routing/v1/";
const scratch = mkdtempSync(join(tmpdir(), "etcd-auth-existing-"));
const servers: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
  rmSync(scratch, { recursive: true, force: true });
});

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs deploy/etcd-auth.sh; resolves with its exit code and output whatever the code. */
async function script(args: string[], env: Record<string, string>): Promise<Outcome> {
  try {
    const r = await run("bash", [SCRIPT, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** `etcdctl ARGS` against `endpoint`; resolves to whether etcd accepted it. */
async function may(endpoint: string, ...args: string[]): Promise<boolean> {
  return run("etcdctl", ["--endpoints", endpoint, ...args]).then(
    () => true,
    () => false,
  );
}

async function ctl(endpoint: string, ...args: string[]): Promise<string> {
  return (await run("etcdctl", ["--endpoints", endpoint, ...args])).stdout;
}

/** A cluster another application already uses: auth on, root, and `billing` on /billing/. */
async function sharedClusterWithAuth(): Promise<EtcdServer> {
  const etcd = await startEtcd();
  servers.push(etcd);
  const e = etcd.endpoint;
  await run("bash", [
    "-c",
    `printf 'root-pw\\n' | etcdctl --endpoints ${e} user add root --interactive=false`,
  ]);
  await ctl(e, "user", "grant-role", "root", "root");
  await ctl(e, "role", "add", "billing");
  await ctl(e, "role", "grant-permission", "billing", "--prefix=true", "readwrite", "/billing/");
  await run("bash", [
    "-c",
    `printf 'bill-pw\\n' | etcdctl --endpoints ${e} user add billing --interactive=false`,
  ]);
  await ctl(e, "user", "grant-role", "billing", "billing");
  await ctl(e, "auth", "enable");
  expect(await may(e, "--user", "billing:bill-pw", "put", "/billing/invoice/1", "a")).toBe(true);
  return etcd;
}

describe("deploy/etcd-auth.sh on an existing cluster with auth on", () => {
  it("authenticates as root first, prints its plan, adds edge-router's users, and the other application keeps working", async () => {
    const etcd = await sharedClusterWithAuth();
    const e = etcd.endpoint;
    const env = {
      ETCDCTL_ENDPOINTS: e,
      ROOT_PASSWORD: "root-pw",
      PUSHER_PASSWORD: "pusher-pw",
      EDGECTL_PASSWORD: "ctl-pw",
      OBSERVER_PASSWORD: "obs-pw",
      HEALTH_PASSWORD_fra_1: "fra-pw",
      POOLS: "fra-1",
    };
    const r = await script(["--insecure", "--out-dir", join(scratch, "on")], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("auth is on; working as root");
    expect(r.stdout).toContain("users already there besides edge-router's: billing");
    // the plan comes first, then the changes
    const planned = r.stdout.indexOf("create user edge-pusher, password from PUSHER_PASSWORD");
    expect(planned).toBeGreaterThan(-1);
    expect(planned).toBeLessThan(r.stdout.indexOf("user edge-pusher created"));
    expect(r.stdout).not.toContain("enable auth");
    expect(r.stdout).not.toContain("create user root");
    for (const pw of Object.values(env))
      if (pw.endsWith("-pw")) expect(r.stdout + r.stderr).not.toContain(pw);

    // edge-router's users work with least privilege
    expect(await may(e, "--user", "edge-pusher:pusher-pw", "get", "--prefix", P)).toBe(true);
    expect(await may(e, "--user", "edge-pusher:pusher-pw", "put", `${P}country/DE`, "{}")).toBe(
      false,
    );
    expect(await may(e, "--user", "edgectl:ctl-pw", "put", `${P}country/DE`, "{}")).toBe(true);
    expect(
      await may(e, "--user", "edge-health-fra-1:fra-pw", "put", `${P}health/fra-1`, "{}"),
    ).toBe(true);
    expect(await may(e, "--user", "edgectl:ctl-pw", "get", "/billing/invoice/1")).toBe(false);
    // the other application still reads and writes, its role untouched; auth is still on
    expect(await may(e, "--user", "billing:bill-pw", "put", "/billing/invoice/2", "b")).toBe(true);
    expect(
      await ctl(e, "--user", "billing:bill-pw", "get", "/billing/invoice/1", "--print-value-only"),
    ).toBe("a\n");
    const billingRole = await ctl(e, "--user", "root:root-pw", "role", "get", "billing");
    expect(billingRole).toContain("/billing/");
    expect(billingRole).not.toContain(P);
    expect(await ctl(e, "--user", "root:root-pw", "auth", "status")).toContain(
      "Authentication Status: true",
    );

    // a second run keeps what exists and says so
    const again = await script(["--insecure", "--out-dir", join(scratch, "on")], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("user edge-pusher exists: kept (password unchanged)");
    expect(again.stdout).toContain("role edge-pusher exists: kept, grants added");
    expect(await may(e, "--user", "edge-pusher:pusher-pw", "get", "--prefix", P)).toBe(true);
  });

  it("without the admin's credentials it stops before changing anything, saying what to set", async () => {
    const etcd = await sharedClusterWithAuth();
    const before = await ctl(etcd.endpoint, "--user", "root:root-pw", "user", "list");
    const r = await script(["--insecure"], { ETCDCTL_ENDPOINTS: etcd.endpoint });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("auth is on: set ROOT_PASSWORD");
    const wrong = await script(["--insecure"], {
      ETCDCTL_ENDPOINTS: etcd.endpoint,
      ROOT_PASSWORD: "nope",
    });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("auth is on and root could not list users");
    expect(wrong.stderr).not.toContain("nope");
    expect(await ctl(etcd.endpoint, "--user", "root:root-pw", "user", "list")).toBe(before);
  });
});

describe("deploy/etcd-auth.sh on a cluster with auth off", () => {
  it("never enables auth without --enable-auth: an anonymous application keeps working, and it says so", async () => {
    const etcd = await startEtcd();
    servers.push(etcd);
    const e = etcd.endpoint;
    await ctl(e, "put", "/other-app/config", "v1");
    const env = { ETCDCTL_ENDPOINTS: e, POOLS: "fra-1" };

    const dry = await script(["--insecure", "--dry-run", "--out-dir", join(scratch, "dry")], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("auth is off");
    expect(dry.stdout).toContain("create user edge-pusher, password generated into");
    expect(dry.stdout).toContain("dry run: nothing changed");
    expect((await ctl(e, "user", "list")).trim()).toBe("");
    expect((await ctl(e, "role", "list")).trim()).toBe("");

    const r = await script(["--insecure", "--out-dir", join(scratch, "off")], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("auth stays off (no --enable-auth)");
    expect(r.stdout).toContain("user edge-pusher created");
    expect(await ctl(e, "user", "list")).not.toMatch(/^root$/m);
    expect(await ctl(e, "auth", "status")).toContain("Authentication Status: false");
    expect(await may(e, "put", "/other-app/config", "v2")).toBe(true);
    expect(await ctl(e, "get", "/other-app/config", "--print-value-only")).toBe("v2\n");
  });
});

describe("deploy/etcd-auth.sh with TLS common-name users (--cert-users)", () => {
  let tls: TlsEtcd;

  it("creates users without passwords on a fresh TLS cluster; each service authenticates by its certificate", async () => {
    tls = await startTlsEtcd();
    servers.push(tls);
    const root = await tls.client("root");
    const as = async (cn: string) => {
      const c = await tls.client(cn);
      return ["--cacert", tls.caFile, "--cert", c.cert, "--key", c.key];
    };
    const e = tls.endpoint;
    // another application, with a password, before auth is on
    await run("bash", [
      "-c",
      `printf 'bill-pw\\n' | etcdctl --endpoints ${e} ${(await as("setup")).join(" ")} user add billing --interactive=false`,
    ]);
    await ctl(e, ...(await as("setup")), "role", "add", "billing");
    await ctl(
      e,
      ...(await as("setup")),
      "role",
      "grant-permission",
      "billing",
      "--prefix=true",
      "readwrite",
      "/billing/",
    );
    await ctl(e, ...(await as("setup")), "user", "grant-role", "billing", "billing");

    const r = await script(["--cert-users", "--enable-auth", "--out-dir", join(scratch, "tls")], {
      ETCDCTL_ENDPOINTS: e,
      ETCD_CACERT: tls.caFile,
      ETCD_CERT: root.cert,
      ETCD_KEY: root.key,
      POOLS: "fra-1",
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "create user edge-pusher, no password (a certificate whose common name is edge-pusher)",
    );
    expect(r.stdout).toContain("users besides edge-router's: billing");
    expect(r.stdout).toContain("auth enabled");
    expect(r.stdout).not.toContain("generated passwords");

    expect(
      await ctl(
        e,
        "--cacert",
        tls.caFile,
        "--cert",
        root.cert,
        "--key",
        root.key,
        "auth",
        "status",
      ),
    ).toContain("Authentication Status: true");
    expect(await may(e, ...(await as("edge-pusher")), "get", "--prefix", P)).toBe(true);
    expect(await may(e, ...(await as("edge-pusher")), "put", `${P}country/DE`, "{}")).toBe(false);
    expect(await may(e, ...(await as("edgectl")), "put", `${P}country/DE`, "{}")).toBe(true);
    // a certificate whose common name is no user gets nothing
    expect(await may(e, ...(await as("stranger")), "get", "--prefix", P)).toBe(false);
    // the other application's password user still reads and writes its keys
    expect(
      await may(e, ...(await as("setup")), "--user", "billing:bill-pw", "put", "/billing/x", "1"),
    ).toBe(true);

    // the real heartbeat, authenticated by its certificate alone
    const fra = await tls.client("edge-health-fra-1");
    const hb = spawn(
      process.execPath,
      [resolve(ROOT, "bin/edgectl.js"), "heartbeat", "fra-1", "--ttl", "5"],
      {
        env: {
          PATH: process.env.PATH ?? "",
          ETCD_ENDPOINTS: e,
          ETCD_CA_FILE: tls.caFile,
          ETCD_CERT_FILE: fra.cert,
          ETCD_KEY_FILE: fra.key,
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
      const deadline = Date.now() + 30_000;
      const health = () =>
        ctl(
          e,
          "--cacert",
          tls.caFile,
          "--cert",
          root.cert,
          "--key",
          root.key,
          "get",
          `${P}health/fra-1`,
          "--print-value-only",
        );
      while (!(await health()).includes("healthy")) {
        if (Date.now() > deadline || hb.exitCode !== null)
          throw new Error(`no health/fra-1:\n${log}`);
        await sleep(200);
      }
      hb.kill("SIGTERM");
      expect(await exited, log).toBe(0);
    } finally {
      hb.kill("SIGKILL");
    }
  });
});
