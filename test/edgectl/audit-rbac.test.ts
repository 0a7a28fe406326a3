import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { variant } from "./audit-support.js";
import { exampleState, runCli, tempFiles } from "./cli-harness.js";

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
let etcd: EtcdServer;
const files = tempFiles();
const outDir = mkdtempSync(join(tmpdir(), "audit-rbac-"));

beforeAll(async () => {
  etcd = await startEtcd();
  await exec(
    "bash",
    [resolve(ROOT, "deploy/etcd-auth.sh"), "--insecure", "--enable-auth", "--out-dir", outDir],
    {
      env: {
        ...process.env,
        ETCDCTL_ENDPOINTS: etcd.endpoint,
        POOLS: "fra-1",
        ROOT_PASSWORD: "root-pw",
        PUSHER_PASSWORD: "pusher-pw",
        EDGECTL_PASSWORD: "ctl-pw",
        HEALTH_PASSWORD_fra_1: "fra-pw",
      },
    },
  );
}, 60_000);
afterAll(async () => {
  await etcd?.stop();
  files.cleanup();
  rmSync(outDir, { recursive: true, force: true });
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

describe("deploy/etcd-auth.sh and the audit records", () => {
  it("the edgectl role may write and prune records in the apply transaction; the pusher may not read them", async () => {
    const env = {
      ETCD_ENDPOINTS: etcd.endpoint,
      ETCD_USERNAME: "edgectl",
      ETCD_PASSWORD: "ctl-pw",
      EDGECTL_AUDIT_KEEP: "2",
    };
    for (const s of [exampleState(), variant(1), variant(2)]) {
      const r = await runCli(["apply", files.write(s), "--yes"], { env });
      expect(r.code, r.stderr).toBe(0);
    }
    const history = await runCli(["history", "-o", "json"], { env });
    expect(history.code, history.stderr).toBe(0);
    // epoch 3's commit pruned epoch 1's record: range deletes are allowed too
    expect(JSON.parse(history.stdout).records.map((r: { epoch: number }) => r.epoch)).toEqual([
      3, 2,
    ]);
    const back = await runCli(["rollback", "2", "--yes"], { env });
    expect(back.code, back.stderr).toBe(0);
    expect(await may("edgectl", "ctl-pw", "get", "--prefix", "/edge/audit/v1/")).toBe(true);
    expect(await may("edge-pusher", "pusher-pw", "get", "--prefix", "/edge/audit/v1/")).toBe(false);
    expect(await may("edge-health-fra-1", "fra-pw", "get", "--prefix", "/edge/audit/v1/")).toBe(
      false,
    );
  });
});
