import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { AUDIT_PAGE } from "../../edgectl/audit/audit-read.js";
import { auditKey } from "../../edgectl/audit/audit-record.js";
import { RollbackShape } from "../../edgectl/output/shapes/rollback-shape.js";
import { run } from "../../edgectl/run.js";
import {
  applyAll,
  auditScope,
  intentFor,
  intentOf,
  markHealthy,
  recordsOf,
  variant,
} from "./audit-support.js";
import { exampleState, runCli, useCliSuite, waitFor } from "./cli-harness.js";

const suite = useCliSuite();

describe("edgectl rollback", () => {
  it("apply ×3 → rollback to the first: the intent equals the first file, as a new epoch with its own record", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "rb");
    const states = [exampleState(), variant(1), variant(2)];
    await markHealthy(suite.client, prefix, ["fra-1", "ams-1", "par-1", "v-1", "v-2"]);
    await applyAll(suite, env, states);
    const r = await runCli(["rollback", "1", "--yes", "--reason", "bad deploy"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Plan for");
    expect(r.stdout).toContain("- pool/v-2");
    expect(r.stdout).toMatch(/DE: v-2 \(country\/DE\) → fra-1 \(country\/DE\)/);
    expect(r.stdout).toContain("Applied 2 changes: epoch 4");
    expect(await intentOf(suite.client, prefix)).toEqual(
      intentFor(states[0] ?? exampleState(), prefix),
    );
    const records = await recordsOf(suite.client, auditPrefix);
    expect(records.at(-1)?.record).toMatchObject({
      epoch: 4,
      command: "rollback",
      reason: "rollback to epoch 1: bad deploy",
      by: "tester",
    });
    // the current epoch: nothing to do, exit 0, nothing written
    const noop = await runCli(["rollback", "4", "--yes"], { env });
    expect(noop.code).toBe(0);
    expect(noop.stdout).toContain("Epoch 4 is the current epoch: nothing to roll back");
    // back to 3 goes through the rollback's own record
    const again = await runCli(["rollback", "3", "--yes"], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(await intentOf(suite.client, prefix)).toEqual(intentFor(variant(2), prefix));
    expect((await recordsOf(suite.client, auditPrefix)).map((x) => x.record.epoch)).toEqual([
      1, 2, 3, 4, 5,
    ]);
    const future = await runCli(["rollback", "9", "--yes"], { env });
    expect(future.code).toBe(1);
    expect(future.stderr).toContain("cannot roll back to epoch 9: the current epoch is 5");
  });

  it("works after etcdctl compact: the intent is rebuilt from the records, not etcd's history", async () => {
    const { prefix, env } = auditScope(suite, "rbcompact");
    await applyAll(suite, env, [variant(1), variant(2), variant(3)]);
    const rev = Number((await suite.client.get(`${prefix}epoch`).exec()).header.revision);
    suite.etcd.ctl("compact", String(rev), "--physical");
    // the old revisions really are gone
    await expect(
      suite.client
        .get(`${prefix}epoch`)
        .revision(rev - 2)
        .string(),
    ).rejects.toThrow();
    const r = await runCli(["rollback", "1", "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await intentOf(suite.client, prefix)).toEqual(intentFor(variant(1), prefix));
  });

  it("reads the records it needs in pages: back across more epochs than one page holds", async () => {
    const { prefix, env } = auditScope(suite, "rbpages");
    const n = AUDIT_PAGE + 6;
    await applyAll(
      suite,
      env,
      Array.from({ length: n }, (_, i) => variant(i + 1)),
    );
    const r = await runCli(["rollback", "1", "--yes"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await intentOf(suite.client, prefix)).toEqual(intentFor(variant(1), prefix));
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe(String(n + 1));
  });

  it("a racing apply during rollback → exit 2 and nothing written", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "rbrace");
    await applyAll(suite, env, [variant(1), variant(2)]);
    const stdin = new PassThrough();
    let out = "";
    let err = "";
    const slow = run(["rollback", "1"], {
      env,
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      stdin,
      isTTY: true,
    });
    expect(await waitFor(() => out.includes("[y/N]"), 20_000)).toBe(true);
    const racer = await runCli(["apply", suite.files.write(variant(3)), "--yes"], { env });
    expect(racer.code, racer.stderr).toBe(0);
    stdin.end("yes\n");
    expect(await slow).toBe(2);
    expect(err).toContain("conflict: epoch moved from 2 to 3");
    expect(await intentOf(suite.client, prefix)).toEqual(intentFor(variant(3), prefix));
    expect((await recordsOf(suite.client, auditPrefix)).map((x) => x.record.command)).toEqual([
      "apply",
      "apply",
      "apply",
    ]);
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("3");
  });

  it("an epoch older than the retained records, or a gap, is exit 1 naming the epoch; nothing written", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "rbold", { EDGECTL_AUDIT_KEEP: "2" });
    await applyAll(suite, env, [1, 2, 3, 4].map(variant));
    // records 3 and 4 are kept: rollback reaches back to epoch 2
    const old = await runCli(["rollback", "1", "--yes"], { env });
    expect(old.code).toBe(1);
    expect(old.stderr).toContain(
      "cannot roll back to epoch 1: it is older than the audit records (the oldest audit record kept is epoch 3, so rollback reaches back to epoch 2)",
    );
    const gapScope = auditScope(suite, "rbgap");
    await applyAll(suite, gapScope.env, [1, 2, 3, 4].map(variant));
    await suite.client.delete().key(auditKey(gapScope.auditPrefix, 3));
    const gap = await runCli(["rollback", "1", "--yes"], { env: gapScope.env });
    expect(gap.code).toBe(1);
    expect(gap.stderr).toContain("the audit record of epoch 3 is missing (a gap in the records)");
    // epoch 3's record is not needed to go back to 3
    const fine = await runCli(["rollback", "3", "--yes"], { env: gapScope.env });
    expect(fine.code, fine.stderr).toBe(0);
    expect(await intentOf(suite.client, gapScope.prefix)).toEqual(
      intentFor(variant(3), gapScope.prefix),
    );
    expect(await intentOf(suite.client, prefix)).toEqual(intentFor(variant(4), prefix));
    expect((await recordsOf(suite.client, auditPrefix)).map((x) => x.record.epoch)).toEqual([3, 4]);
  });

  it("refuses a rollback that would remove a pool a live boost names (exit 1), as apply does", async () => {
    const { prefix, env } = auditScope(suite, "rbboost");
    await applyAll(suite, env, [variant(1), variant(2)]);
    const boost = await runCli(["boost", "FR", "--pool", "v-2", "--ttl", "10m"], { env });
    expect(boost.code, boost.stderr).toBe(0);
    const r = await runCli(["rollback", "1", "--yes", "-o", "json"], { env });
    expect(r.code).toBe(1);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe("invalid-input");
    expect(err.details.join("\n")).toContain("v-2");
    expect(await intentOf(suite.client, prefix)).toEqual(intentFor(variant(2), prefix));
    // the current epoch as JSON: nothing applied
    const noop = await runCli(["rollback", "2", "-o", "json"], { env });
    expect(noop.code, noop.stderr).toBe(0);
    expect(RollbackShape.parse(JSON.parse(noop.stdout))).toMatchObject({
      applied: false,
      epoch: 2,
      to_epoch: 2,
      commit_revision: null,
      changes: [],
    });
  });

  it("intent changed outside edgectl: exit 1 naming the epoch and key, nothing written", async () => {
    const { prefix, env } = auditScope(suite, "rboob");
    await applyAll(suite, env, [variant(1), variant(2)]);
    await suite.client.put(`${prefix}country/DE`).value('{"primary":"ams-1","fallbacks":[]}');
    const r = await runCli(["rollback", "1", "--yes"], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("epoch 2's record says it set country/DE to");
    expect(r.stderr).toContain('{"primary":"ams-1","fallbacks":[]}');
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("2");
  });

  it("leaves overrides alone; -o json reports the change in the documented shape", async () => {
    const { prefix, env } = auditScope(suite, "rbjson");
    await markHealthy(suite.client, prefix, ["fra-1", "ams-1", "par-1", "v-1", "v-2"]);
    await applyAll(suite, env, [variant(1), variant(2)]);
    const boost = await runCli(["boost", "FR", "--pool", "par-1", "--ttl", "10m"], { env });
    expect(boost.code, boost.stderr).toBe(0);
    const r = await runCli(["rollback", "1", "--yes", "-o", "json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const doc = RollbackShape.parse(JSON.parse(r.stdout));
    expect(doc).toMatchObject({ applied: true, epoch: 3, to_epoch: 1, prefix });
    expect(doc.changes.map((c) => [c.key, c.kind])).toEqual([
      ["country/DE", "change"],
      ["pool/v-1", "add"],
      ["pool/v-2", "remove"],
    ]);
    expect(doc.effect).toHaveLength(1);
    expect(doc.effect[0]).toMatchObject({
      country: "DE",
      before: { pool: "v-2", source: "country/DE" },
      after: { pool: "v-1", source: "country/DE" },
    });
    // the plan went to stderr, stdout is the one document
    expect(r.stderr).toContain("Plan for");
    expect(await suite.client.get(`${prefix}override/FR`).string()).not.toBeNull();
    const err = await runCli(["rollback", "7", "-o", "json"], { env });
    expect(err.code).toBe(1);
    expect(JSON.parse(err.stdout).error.code).toBe("invalid-input");
  });
});
