import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Cleanup } from "../../bench/lib/cleanup.js";
import { singleEtcd } from "../../testkit/system/etcd-side.js";
import { localKv } from "../../testkit/system/kv-side.js";
import { cleanupOwner } from "../../testkit/system/owner.js";
import { none, startSystem } from "../../testkit/system.js";

async function etcdAnswers(endpoint: string): Promise<boolean> {
  try {
    return (await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1_000) })).ok;
  } catch {
    return false;
  }
}

describe("the system launcher (testkit/system.ts)", () => {
  it("runs the steps in order and gives the pushers the etcd, prefix and KV sink; its owner stops them", async () => {
    const cleanup = new Cleanup();
    const steps: string[] = [];
    let pusherEnv: Record<string, string> = {};
    try {
      const system = await startSystem(cleanupOwner(cleanup), {
        prefix: "/launcher/",
        etcd: async (owner) => {
          steps.push("etcd");
          return singleEtcd()(owner);
        },
        origins: async () => {
          steps.push("origins");
          return "origins";
        },
        seed: async (s) => {
          steps.push(`seed with ${s.origins}`);
          s.etcd.server.ctl("put", "/launcher/epoch", "1");
        },
        kv: async (owner) => {
          steps.push("kv");
          return localKv({ namespaceId: "launcher" })(owner);
        },
        pushers: async (s) => {
          steps.push("pushers");
          pusherEnv = s.pusherEnv();
          return 2;
        },
        worker: async (s) => {
          steps.push(`worker after ${s.pushers} pushers`);
          return "worker";
        },
        heartbeats: async (s) => {
          steps.push(`heartbeats after the ${s.worker}`);
          return [];
        },
        observer: async () => {
          steps.push("observer");
        },
      });
      expect(steps).toEqual([
        "etcd",
        "origins",
        "seed with origins",
        "kv",
        "pushers",
        "worker after 2 pushers",
        "heartbeats after the worker",
        "observer",
      ]);
      expect(pusherEnv).toEqual({
        ETCD_ENDPOINTS: system.etcd.endpoint,
        ROUTING_PREFIX: "/launcher/",
        KV_SINK: "local",
        KV_LOCAL_PERSIST: system.kv.persistDir,
        KV_NAMESPACE_ID: "launcher",
      });
      expect(system.etcd.server.ctl("get", "/launcher/epoch", "--print-value-only").trim()).toBe(
        "1",
      );
      expect(await etcdAnswers(system.etcd.endpoint)).toBe(true);
      await cleanup.runAll();
      expect(await etcdAnswers(system.etcd.endpoint)).toBe(false);
      expect(existsSync(system.kv.persistDir)).toBe(false);
    } finally {
      await cleanup.runAll();
    }
  }, 60_000);

  it("stops at a step that fails, with its error, and the owner stops what had started", async () => {
    const cleanup = new Cleanup();
    let endpoint = "";
    const later: string[] = [];
    try {
      await expect(
        startSystem(cleanupOwner(cleanup), {
          prefix: "/launcher/",
          etcd: singleEtcd(),
          origins: none,
          seed: async (s) => {
            endpoint = s.etcd.endpoint;
            throw new Error("seed file is not valid");
          },
          kv: async (owner) => {
            later.push("kv");
            return localKv()(owner);
          },
          pushers: async () => {
            later.push("pushers");
          },
          worker: none,
          heartbeats: none,
        }),
      ).rejects.toThrow("seed file is not valid");
      expect(later).toEqual([]);
      expect(await etcdAnswers(endpoint)).toBe(true);
    } finally {
      await cleanup.runAll();
    }
    expect(await etcdAnswers(endpoint)).toBe(false);
  }, 60_000);
});

describe("cleanupOwner (testkit/system/owner.ts)", () => {
  it("stops a child it spawned, with its process group, when the teardown runs", async () => {
    const cleanup = new Cleanup();
    const owner = cleanupOwner(cleanup);
    const child = owner.spawn({
      name: "sleeper",
      command: process.execPath,
      args: ["-e", "setInterval(() => {}, 1000)"],
      env: { PATH: process.env.PATH ?? "" },
      cwd: process.cwd(),
    });
    expect(child.alive()).toBe(true);
    await cleanup.runAll();
    expect(child.alive()).toBe(false);
  }, 30_000);
});
