import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import { parseMap } from "../../core/index.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { freePort } from "../../testkit/ports.js";
import { startTcpProxy } from "../../testkit/tcp-proxy.js";
import { seedRouting, testClient, uniqueNames, waitFor } from "./harness.js";

const BIN = resolve(import.meta.dirname, "../../bin/edge-pusher.js");
const NAMESPACE = "test-routing-ns";

let etcd: EtcdServer;
let client: Etcd3;
const dirs: string[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  client = testClient(etcd.endpoint);
});
afterAll(async () => {
  client?.close();
  await etcd?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "edge-pusher-test-"));
  dirs.push(d);
  return d;
}

interface Run {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(env: Record<string, string>, args: string[] = []): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: tempDir(),
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function startupError(env: Record<string, string>): Promise<string> {
  const r = run({ ETCD_ENDPOINTS: etcd.endpoint, KV_NAMESPACE_ID: NAMESPACE, ...env });
  const { code } = await r.exit;
  expect(code).not.toBe(0);
  const lines = r.stderr().trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^edge-pusher: /);
  expect(r.stderr()).not.toMatch(/\n\s+at /);
  return lines[0] ?? "";
}

describe("edge-pusher entry point", () => {
  it("--help lists every variable with its default", async () => {
    const r = run({}, ["--help"]);
    expect((await r.exit).code).toBe(0);
    for (const name of [
      "ETCD_ENDPOINTS",
      "ETCD_CA_FILE",
      "ROUTING_PREFIX",
      "KV_SINK",
      "KV_LOCAL_PERSIST",
      "KV_NAMESPACE_ID",
      "CF_API_TOKEN",
      "CF_API_BASE_URL",
      "CF_API_BUDGET",
      "ORIGIN_TEMPLATE",
      "FLOOR_POOL",
      "PUSHER_LISTEN",
      "PUSHER_ALLOWED_HOSTS",
      "HEARTBEAT_SECONDS",
      "RESYNC_SECONDS",
      "PUSHER_ELECTION_KEY",
      "PUSHER_ELECTION_TTL",
    ]) {
      expect(r.stdout()).toContain(name);
    }
    expect(r.stdout()).toContain("127.0.0.1:9464");
  });

  it("fails with one line for an unknown KV_SINK", async () => {
    expect(await startupError({ KV_SINK: "s3" })).toContain("KV_SINK");
  });

  it("fails with one line for a missing Cloudflare setting", async () => {
    const line = await startupError({ KV_SINK: "cloudflare", CF_API_TOKEN: "secret-token-x" });
    expect(line).toContain("CF_ACCOUNT_ID");
    expect(line).not.toContain("secret-token-x");
  });

  it("refuses to start on deploy/pusher.env.example's values, naming the variable and the file", async () => {
    const example = readFileSync(
      resolve(import.meta.dirname, "../../deploy/pusher.env.example"),
      "utf8",
    );
    const env = Object.fromEntries(
      example
        .split("\n")
        .filter((l) => /^[A-Z_]+=/.test(l))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    const token = "secret-token-placeholder-test";
    const line = await startupError({ ...env, CF_API_TOKEN: token, ETCD_PASSWORD: "pw" });
    expect(line).toMatch(
      /^edge-pusher: CF_ACCOUNT_ID: "REPLACE_WITH_ACCOUNT_ID" is a template's placeholder/,
    );
    expect(line).toContain("edit /etc/edge-router/pusher.env");
    expect(line).not.toContain(token);
    const next = await startupError({
      ...env,
      CF_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
      CF_API_TOKEN: token,
    });
    expect(next).toMatch(/^edge-pusher: KV_NAMESPACE_ID: .*placeholder.*pusher\.env/);
  });

  it("fails with one line for an unreadable ETCD_CA_FILE", async () => {
    expect(await startupError({ ETCD_CA_FILE: "/nonexistent/ca.pem" })).toContain("ETCD_CA_FILE");
  });

  it("starts anyway while etcd is unreachable, says so, and pushes once etcd answers", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const proxy = await startTcpProxy(etcd.clientPort);
    proxy.refuse();
    const port = await freePort();
    const r = run({
      ETCD_ENDPOINTS: proxy.endpoint,
      ROUTING_PREFIX: prefix,
      PUSHER_ELECTION_KEY: electionKey,
      PUSHER_ELECTION_TTL: "2",
      KV_SINK: "local",
      KV_LOCAL_PERSIST: tempDir(),
      KV_NAMESPACE_ID: NAMESPACE,
      PUSHER_LISTEN: `127.0.0.1:${port}`,
    });
    try {
      const status = async () => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/status`);
          return (await res.json()) as { pushed_revision: number | null; last_error: unknown };
        } catch {
          return null;
        }
      };
      const down = await waitFor("status while etcd is down", status, 30_000);
      expect(down.pushed_revision).toBeNull();
      expect(r.stdout()).toContain("etcd not reachable yet; starting anyway");
      expect(r.child.exitCode).toBeNull();
      proxy.accept();
      const pushed = await waitFor(
        "a push once etcd answers",
        async () => (await status())?.pushed_revision ?? null,
        30_000,
      );
      expect(pushed).toBeGreaterThan(0);
      r.child.kill("SIGTERM");
      expect((await r.exit).code).toBe(0);
    } finally {
      if (r.child.exitCode === null) r.child.kill("SIGKILL");
      await proxy.close();
    }
  });

  it("KV_SINK=file: two pushers on one host each write their snapshot files, with no election", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const dirsOf = [join(tempDir(), "snap"), join(tempDir(), "snap")];
    const start = (dir: string, id: string) =>
      run({
        ETCD_ENDPOINTS: etcd.endpoint,
        ROUTING_PREFIX: prefix,
        PUSHER_ELECTION_KEY: electionKey,
        KV_SINK: "file",
        KV_FILE_DIR: dir,
        PUSHER_LISTEN: "127.0.0.1:0",
        PUSHER_ID: id,
      });
    const routesIn = (dir: string) => {
      try {
        return parseMap(readFileSync(join(dir, "routes.json"), "utf8"));
      } catch {
        return null;
      }
    };
    let runs = dirsOf.map((dir, i) => start(dir, `file-${i}`));
    try {
      for (const dir of dirsOf) {
        await waitFor(
          "first snapshot",
          () => routesIn(dir)?.countries.DE?.pool === "fra-1",
          30_000,
        );
      }
      // Nobody campaigned: the election key holds no candidate.
      expect(await client.getAll().prefix(`${electionKey}/`).keys()).toEqual([]);
      const meta = JSON.parse(readFileSync(join(dirsOf[1] ?? "", "meta.json"), "utf8")) as {
        pusher: string;
      };
      expect(meta.pusher).toBe("file-1");

      await client.put(`${prefix}country/DE`).value('{"primary":"ams-1","fallbacks":["par-1"]}');
      for (const dir of dirsOf) {
        await waitFor("the change in both", () => routesIn(dir)?.countries.DE?.pool === "ams-1");
      }
      // An invalid rule: DE keeps its last valid one, also across a restart that reads it back
      // from routes.json.
      await client.put(`${prefix}country/DE`).value('{"primary":"nowhere-9"}');
      await waitFor("DE kept", () => routesIn(dirsOf[0] ?? "")?.kept?.DE !== undefined);
      for (const r of runs) r.child.kill("SIGTERM");
      for (const r of runs) expect((await r.exit).code).toBe(0);
      // With every pusher down, a reader starting now reads the last complete map.
      const whileDown = routesIn(dirsOf[0] ?? "");
      expect(whileDown?.kept?.DE).toBeDefined();
      expect(whileDown?.countries.DE?.pool).toBe("ams-1");
      runs = [start(dirsOf[0] ?? "", "file-0b")];
      await waitFor("restarted", () => {
        const meta = JSON.parse(readFileSync(join(dirsOf[0] ?? "", "meta.json"), "utf8"));
        return (meta as { pusher: string }).pusher === "file-0b";
      });
      const after = routesIn(dirsOf[0] ?? "");
      expect(after?.countries.DE?.pool).toBe("ams-1");
      expect(after?.countries.DE?.source).toBe("country/DE");
      expect(after?.problems.join(" ")).toMatch(/country\/DE/);
    } finally {
      for (const r of runs) if (r.child.exitCode === null) r.child.kill("SIGKILL");
    }
  });

  it("pushes with the local sink and flushes the pending write on SIGTERM, exiting 0", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const persist = tempDir();
    const port = await freePort();
    const r = run({
      ETCD_ENDPOINTS: etcd.endpoint,
      ROUTING_PREFIX: prefix,
      PUSHER_ELECTION_KEY: electionKey,
      PUSHER_ELECTION_TTL: "2",
      KV_SINK: "local",
      KV_LOCAL_PERSIST: persist,
      KV_NAMESPACE_ID: NAMESPACE,
      PUSHER_LISTEN: `127.0.0.1:${port}`,
      PUSHER_ID: "child-1",
    });
    try {
      const first = await waitFor(
        "first push",
        async () => {
          const res = await fetch(`http://127.0.0.1:${port}/status`);
          const s = (await res.json()) as { pushed_revision: number | null };
          return s.pushed_revision;
        },
        30_000,
      );
      // Two changes back to back: the second lands inside the throttle window, so it is
      // still pending when SIGTERM arrives and must be flushed.
      await client.put(`${prefix}country/NL`).value('{"primary":"par-1"}');
      await new Promise((res) => setTimeout(res, 150));
      const last = await client.put(`${prefix}country/PL`).value('{"primary":"fra-1"}').exec();
      const lastRev = Number(last.header.revision);
      // SIGTERM at once: PL's watch event may not even have arrived; the final read takes it.
      r.child.kill("SIGTERM");
      const { code } = await r.exit;
      expect(code).toBe(0);
      expect(lastRev).toBeGreaterThan(first);

      const sink = await createLocalSink({ persistDir: persist, namespaceId: NAMESPACE });
      try {
        const map = parseMap((await sink.get("routes")) ?? "");
        expect(map?.rev).toBeGreaterThanOrEqual(lastRev);
        expect(map?.countries.PL?.pool).toBe("fra-1");
        const meta = JSON.parse((await sink.get("meta")) ?? "{}") as { pusher?: string };
        expect(meta.pusher).toBe("child-1");
      } finally {
        await sink.close();
      }
      const lines = r
        .stdout()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const push = lines.find((l) => l.msg === "push");
      expect(push).toMatchObject({ revision: expect.any(Number), bytes: expect.any(Number) });
      expect(push?.duration_ms).toEqual(expect.any(Number));
      expect(lines.some((l) => l.msg === "stopped")).toBe(true);
    } finally {
      if (r.child.exitCode === null) r.child.kill("SIGKILL");
    }
  });
});
