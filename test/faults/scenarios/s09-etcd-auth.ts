import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { stringify } from "yaml";
import { type EtcdServer, etcdBinary } from "../../../testkit/etcd.js";
import { expectedMap, waitConverged } from "../../../testkit/map-oracle.js";
import { runOwned, spawnOwned } from "../../../testkit/owned-process.js";
import { ROOT } from "../../../testkit/pusher-process.js";
import { Invariants, type Scenario } from "../scenario.js";
import { edgectlBinary, STACK_FRAME } from "../support/edgectl.js";
import { names, scenarioEtcd } from "../support/etcd-world.js";
import { fromKeyWatchProbe, fromKeyWatchVulnerable } from "../support/from-key-watch.js";
import { startRecordedKv } from "../support/kv-recorder.js";
import { startScenarioPusher } from "../support/pusher-process.js";

/** First releases with the nested-transaction RBAC fix (docs/reference.md §7). */
const FIXED = { "3.4": 42, "3.5": 28, "3.6": 9 } as Record<string, number>;

function etcdVersion(): string {
  const out = execFileSync(etcdBinary(), ["--version"], { encoding: "utf8" });
  return /etcd Version: (\S+)/.exec(out)?.[1] ?? "unknown";
}

/** Whether this etcd release is one that lets a nested transaction bypass RBAC. */
function knownVulnerable(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const fixed = FIXED[`${m[1]}.${m[2]}`];
  return fixed !== undefined && Number(m[3]) < fixed;
}

/** Is this an error for a refused credential or permission (not a network failure)? */
function refused(e: unknown): boolean {
  const t = e instanceof Error ? `${e.name} ${e.message}` : String(e);
  return /permission denied|PermissionDenied|user name is empty|invalid auth token|authentication failed|AuthenticationFailed|not capable/i.test(
    t,
  );
}

async function attempt(fn: () => Promise<unknown>): Promise<"allowed" | "refused" | string> {
  try {
    await fn();
    return "allowed";
  } catch (e) {
    return refused(e) ? "refused" : `error: ${e instanceof Error ? e.message : String(e)}`;
  }
}

function setupRbac(
  etcd: EtcdServer,
  prefix: string,
  electionPrefix: string,
  pw: Record<string, string>,
): void {
  const ctl = (...a: string[]) => etcd.ctl(...a);
  const user = (name: string, role: string) => {
    ctl("user", "add", name, `--new-user-password=${pw[name]}`, "--interactive=false");
    ctl("user", "grant-role", name, role);
  };
  ctl("role", "add", "root");
  user("root", "root");
  ctl("role", "add", "pusher");
  ctl("role", "grant-permission", "pusher", "read", prefix, "--prefix=true");
  ctl("role", "grant-permission", "pusher", "readwrite", electionPrefix, "--prefix=true");
  user("pusher", "pusher");
  ctl("role", "add", "operator");
  ctl("role", "grant-permission", "operator", "readwrite", prefix, "--prefix=true");
  // apply writes its audit record beside the epoch bump (deploy/etcd-auth.sh grants the same)
  ctl("role", "grant-permission", "operator", "readwrite", "/edge/audit/v1/", "--prefix=true");
  user("edgectl", "operator");
  for (const pool of ["fra-1", "ams-1"]) {
    ctl("role", "add", `pool-${pool}`);
    ctl("role", "grant-permission", `pool-${pool}`, "readwrite", `${prefix}health/${pool}`);
    user(`hb-${pool}`, `pool-${pool}`);
  }
  ctl("auth", "enable");
}

export const etcdAuth: Scenario = {
  id: 9,
  title: "etcd auth",
  invariant:
    "pusher works read-only and is denied writes; a pool's heartbeat writes only its own key; anonymous access refused; wrong passwords give one clear line, no stack trace; a from-key watch past a single-key grant (GHSA-xg4h-6gfc-h4m8) is reported",
  budgetMs: () => 180_000,
  async run(ctx) {
    const inv = new Invariants();
    const etcd = await scenarioEtcd(ctx);
    const { prefix } = names("auth");
    const electionPrefix = `${prefix.replace(/routing\/v1\/$/, "")}pusher/`;
    const pw: Record<string, string> = {};
    for (const u of ["root", "pusher", "edgectl", "hb-fra-1", "hb-ams-1"]) {
      pw[u] = `pw-${u}-${Math.random().toString(36).slice(2, 12)}`;
      ctx.transcript.secret(`ETCD_PASSWORD(${u})`, pw[u] as string);
    }
    setupRbac(etcd, prefix, electionPrefix, pw);
    const as = (u: string) => {
      const c = new Etcd3({
        hosts: etcd.endpoint,
        auth: { username: u, password: pw[u] as string },
      });
      ctx.defer(() => c.close());
      return c;
    };
    const base = { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix };
    const creds = (u: string, password = pw[u] as string) => ({
      ...base,
      ETCD_USERNAME: u,
      ETCD_PASSWORD: password,
    });
    const cleanLine = (what: string, out: string) => {
      inv.check(
        !STACK_FRAME.test(out),
        "stack trace printed",
        () => `${what}: ${out.slice(0, 200)}`,
      );
      const lines = out
        .trim()
        .split("\n")
        .filter((l) => l.trim());
      inv.check(
        lines.length >= 1 && lines.length <= 3,
        "not one clear error line",
        () => `${what}: ${lines.length} lines: ${out.slice(0, 200)}`,
      );
    };

    // The operator writes intent.
    const dir = await mkdtemp(join(tmpdir(), "faults-auth-"));
    ctx.defer(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "routing.yaml");
    writeFileSync(
      file,
      stringify({
        pools: {
          "fra-1": { origin: "https://fra-1.example.net" },
          "ams-1": { origin: "https://ams-1.example.net" },
          "par-1": { origin: "https://par-1.example.net" },
        },
        countries: {
          _default: { primary: "ams-1", fallbacks: ["par-1"] },
          DE: { primary: "fra-1", fallbacks: ["ams-1"] },
        },
      }),
    );
    const applied = await edgectlBinary(ctx, ["apply", file, "--yes"], creds("edgectl"));
    inv.check(
      applied.code === 0,
      "operator (readwrite role) cannot apply",
      () => `exit ${applied.code}: ${applied.stderr.slice(0, 200)}`,
    );

    // Each pool's heartbeat writes its own key.
    const hb = (pool: string, user: string) => {
      const p = spawnOwned(
        `heartbeat ${pool} as ${user}`,
        process.execPath,
        [join(ROOT, "bin/edgectl.js"), "heartbeat", pool, "--ttl", "5", "--interval", "1"],
        {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, ...creds(user) },
          cwd: ROOT,
          onOutput: (t) => ctx.transcript.add(`heartbeat ${pool}`, "log", t),
        },
      );
      ctx.defer(() => p.stop(3_000));
      return p;
    };
    hb("fra-1", "hb-fra-1");
    hb("ams-1", "hb-ams-1");
    const root = as("root");
    let beating = false;
    for (let i = 0; i < 100 && !beating; i++) {
      const [a, b] = await Promise.all([
        root.get(`${prefix}health/fra-1`).string(),
        root.get(`${prefix}health/ams-1`).string(),
      ]);
      beating = a !== null && b !== null;
      if (!beating) await sleep(100);
    }
    inv.check(
      beating,
      "a pool's heartbeat could not write its own health key",
      () => "health/fra-1 or health/ams-1 missing after 10 s",
    );
    const fraHb = as("hb-fra-1");
    const cross = await attempt(() =>
      fraHb.put(`${prefix}health/ams-1`).value('{"status":"healthy"}').exec(),
    );
    inv.check(
      cross === "refused",
      "a pool's credentials wrote another pool's key",
      () => `hb-fra-1 → health/ams-1: ${cross}`,
    );
    const crossRule = await attempt(() =>
      fraHb.put(`${prefix}country/DE`).value('{"primary":"fra-1"}').exec(),
    );
    inv.check(
      crossRule === "refused",
      "a pool's credentials wrote intent",
      () => `hb-fra-1 → country/DE: ${crossRule}`,
    );
    // A heartbeat for a pool whose key its credentials do not cover: it must never write it, and
    // must say why (it may keep retrying: an operator can fix the role without a restart).
    const foreignHb = async (pool: string, user: string, password?: string) => {
      const p = spawnOwned(
        `heartbeat ${pool} as ${user}`,
        process.execPath,
        [join(ROOT, "bin/edgectl.js"), "heartbeat", pool, "--ttl", "5", "--interval", "1"],
        {
          env: { PATH: process.env.PATH, HOME: process.env.HOME, ...creds(user, password) },
          cwd: ROOT,
        },
      );
      ctx.defer(() => p.stop(3_000));
      await Promise.race([p.exited, sleep(8_000)]);
      await p.stop(3_000);
      ctx.transcript.add(`heartbeat ${pool} as ${user}`, "cli", p.output());
      return p.output();
    };
    const wrongHb = await foreignHb("par-1", "hb-fra-1");
    const parHealth = await root.get(`${prefix}health/par-1`).string();
    inv.check(
      parHealth === null,
      "a pool's heartbeat wrote another pool's key",
      () => `health/par-1 = ${parHealth}`,
    );
    inv.check(
      /permission denied/i.test(wrongHb),
      "heartbeat for another pool's key does not say why it fails",
      () => wrongHb.slice(0, 200),
    );
    inv.check(
      !STACK_FRAME.test(wrongHb),
      "stack trace printed",
      () => `heartbeat for another pool: ${wrongHb.slice(0, 200)}`,
    );
    const badPwHb = await foreignHb("fra-1", "hb-fra-1", "wrong-password");
    inv.check(
      /auth|password|credential/i.test(badPwHb),
      "heartbeat with a wrong password: no clear error",
      () => badPwHb.slice(0, 200),
    );
    inv.check(
      !STACK_FRAME.test(badPwHb),
      "stack trace printed",
      () => `heartbeat wrong password: ${badPwHb.slice(0, 200)}`,
    );

    // The pusher runs read-only (plus its election prefix) and converges.
    const kv = await startRecordedKv(ctx);
    const pusher = await startScenarioPusher(ctx, {
      id: "auth-1",
      etcdEndpoint: etcd.endpoint,
      prefix,
      electionKey: `${electionPrefix}leader`,
      electionTtl: 3,
      kvEnv: kv.env(),
      extraEnv: { ETCD_USERNAME: "pusher", ETCD_PASSWORD: pw.pusher as string },
    });
    const started = await pusher.ready(20_000).then(
      () => true,
      () => false,
    );
    const firstLine = pusher.proc.output().trim().split("\n")[0] ?? "";
    inv.check(
      started,
      "pusher with a read-only role (plus its election prefix) does not start",
      () => firstLine.slice(0, 240),
    );
    const took = started
      ? await waitConverged(() => kv.routes(), await expectedMap(root, prefix), 20_000)
      : null;
    if (started) {
      inv.check(took !== null, "read-only pusher did not push the map", () =>
        pusher.proc.output().slice(-300),
      );
      inv.check(
        kv.routes()?.countries.DE?.pool === "fra-1",
        "pusher's map ignores the heartbeats",
        () => JSON.stringify(kv.routes()?.countries.DE ?? null),
      );
    }
    const ro = as("pusher");
    const probes: [string, () => Promise<unknown>][] = [
      ["put", () => ro.put(`${prefix}country/DE`).value('{"primary":"ams-1"}').exec()],
      ["delete", () => ro.delete().key(`${prefix}country/DE`).exec()],
      [
        "txn put",
        () =>
          ro
            .if(`${prefix}epoch`, "Version", ">", 0)
            .then(ro.put(`${prefix}epoch`).value("999"))
            .commit(),
      ],
      [
        "lease put",
        () =>
          ro
            .lease(5, { autoKeepAlive: false })
            .put(`${prefix}health/par-1`)
            .value('{"status":"healthy"}')
            .exec(),
      ],
    ];
    for (const [name, fn] of probes) {
      const res = await attempt(fn);
      inv.check(
        res === "refused",
        "pusher credentials were allowed a write",
        () => `${name}: ${res}`,
      );
    }
    const version = etcdVersion();
    const nested = await attempt(() =>
      ro.kv.txn({
        compare: [],
        success: [
          {
            request_txn: {
              compare: [],
              success: [
                {
                  request_put: {
                    key: Buffer.from(`${prefix}country/FR`),
                    value: Buffer.from('{"primary":"ams-1"}'),
                  },
                },
              ],
              failure: [],
            },
          },
        ],
        failure: [],
      }),
    );
    const notes: string[] = [];
    if (nested === "allowed") {
      await root.delete().key(`${prefix}country/FR`).exec();
      if (knownVulnerable(version)) {
        notes.push(
          `etcd ${version}: a nested transaction let the read-only pusher user WRITE (the known RBAC bypass, docs/reference.md §7); the read-only guarantee needs etcd 3.4.42+, 3.5.28+ or 3.6.9+`,
        );
      } else {
        inv.check(
          false,
          "nested transaction bypassed RBAC on an etcd release said to be fixed",
          () => version,
        );
      }
    } else {
      notes.push(`etcd ${version}: nested-transaction write by the read-only user: ${nested}`);
    }
    // A from-key watch by a user who may read one exact key (GHSA-xg4h-6gfc-h4m8).
    const otherKey = `${electionPrefix.replace(/pusher\/$/, "")}zz-not-granted`;
    const otherRev = Number(
      (await root.put(otherKey).value("not for pools").exec()).header.revision,
    );
    const fromKey = await fromKeyWatchProbe(fraHb, `${prefix}health/fra-1`, otherKey, otherRev);
    // The same watch as root must see the key, or the probe proves nothing.
    const control = await fromKeyWatchProbe(root, `${prefix}health/fra-1`, otherKey, otherRev);
    inv.check(
      control === "allowed",
      "from-key watch probe sees nothing even as root",
      () => control,
    );
    if (fromKey === "allowed") {
      if (fromKeyWatchVulnerable(version)) {
        notes.push(
          `etcd ${version}: a from-key watch let hb-fra-1 (read on health/fra-1 only) see ${otherKey.slice(otherKey.lastIndexOf("/") + 1)} beyond its grant (GHSA-xg4h-6gfc-h4m8, docs/reference.md §7); per-pool grants hold only on etcd 3.5.33+, 3.6.14+ or 3.7.1+`,
        );
      } else {
        inv.check(
          false,
          "from-key watch bypassed RBAC on an etcd release said to be fixed",
          () => version,
        );
      }
    } else {
      notes.push(`etcd ${version}: from-key watch beyond a single-key grant: ${fromKey}`);
    }

    // Anonymous access and wrong passwords.
    const anon = new Etcd3({ hosts: etcd.endpoint });
    ctx.defer(() => anon.close());
    const anonRead = await attempt(() => anon.get(`${prefix}country/DE`).string());
    inv.check(anonRead === "refused", "anonymous read allowed", () => anonRead);
    const anonWrite = await attempt(() => anon.put(`${prefix}country/DE`).value("{}").exec());
    inv.check(anonWrite === "refused", "anonymous write allowed", () => anonWrite);
    const anonCtl = await edgectlBinary(ctx, ["export"], base, 30_000);
    inv.check(
      anonCtl.code === 1,
      "anonymous edgectl export did not exit 1",
      () => `exit ${anonCtl.code}`,
    );
    cleanLine("anonymous edgectl export", anonCtl.stderr);
    const badCtl = await edgectlBinary(
      ctx,
      ["apply", file, "--yes"],
      creds("edgectl", "wrong-password"),
      30_000,
    );
    inv.check(
      badCtl.code === 1 && /auth|password|credential/i.test(badCtl.stderr),
      "edgectl with a wrong password: no clear error",
      () => `exit ${badCtl.code}: ${badCtl.stderr.slice(0, 200)}`,
    );
    cleanLine("edgectl wrong password", badCtl.stderr);
    const badPusher = await runOwned(
      "pusher wrong password",
      process.execPath,
      [join(ROOT, "bin/edge-pusher.js")],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ...creds("pusher", "wrong-password"),
          PUSHER_LISTEN: "127.0.0.1:0",
          ...kv.env(),
          PUSHER_ELECTION_KEY: `${electionPrefix}leader`,
        },
        cwd: ROOT,
        timeoutMs: 30_000,
      },
    );
    ctx.transcript.add("pusher wrong password", "log", badPusher.output);
    inv.check(
      badPusher.code === 1 && /auth|password|credential/i.test(badPusher.stderr),
      "pusher with a wrong password: no clear error",
      () => `exit ${badPusher.code}: ${badPusher.output.slice(0, 200)}`,
    );
    cleanLine("pusher wrong password", badPusher.stderr);
    if (started) {
      await pusher.status();
      await pusher.metrics();
    }
    return {
      runs: probes.length + 9,
      figure: `pusher pushed read-only in ${took === null ? "never" : `${(took / 1000).toFixed(1)} s`}; writes by pusher creds refused ${probes.length - inv.count("pusher credentials were allowed a write")}/${probes.length}; cross-pool write ${cross}; anonymous ${anonRead}; wrong password → exit ${badCtl.code}/${badPusher.code}; nested txn on ${version}: ${nested}; from-key watch: ${fromKey}`,
      failures: inv.failures(),
      notes,
    };
  },
};
