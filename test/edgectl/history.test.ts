import { describe, expect, it } from "vitest";
import { AUDIT_PAGE } from "../../edgectl/audit/audit-read.js";
import { auditKey } from "../../edgectl/audit/audit-record.js";
import { HistoryShape } from "../../edgectl/output/shapes/history-shape.js";
import { applyAll, auditScope, recordsOf, variant } from "./audit-support.js";
import { exampleState, runCli, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();

describe("edgectl history", () => {
  it("apply ×3 → history lists 3, newest first: epoch, time, who, command, reason, changed keys", async () => {
    const { env, auditPrefix } = auditScope(suite, "hist", { EDGECTL_USER: "bob@ops" });
    await applyAll(suite, env, [exampleState(), variant(1), variant(2)]);
    const r = await runCli(["history"], { env });
    expect(r.code, r.stderr).toBe(0);
    const heads = r.stdout.split("\n").filter((l) => l.startsWith("epoch "));
    expect(heads.map((l) => l.split("  ")[0])).toEqual(["epoch 3", "epoch 2", "epoch 1"]);
    const stored = await recordsOf(suite.client, auditPrefix);
    expect(heads[0]).toBe(`epoch 3  ${stored[2]?.record.at}  bob@ops  apply  reason: "step 3"`);
    // epoch 3 swapped v-1 for v-2 and re-pointed DE
    expect(r.stdout).toContain("    ~country/DE  -pool/v-1  +pool/v-2");
    expect(r.stdout).toContain("+country/DE  +country/_default  +pool/ams-1");

    const limited = await runCli(["history", "--limit", "2"], { env });
    expect(limited.stdout.split("\n").filter((l) => l.startsWith("epoch "))).toHaveLength(2);
  });

  it("-o json gives the records in the documented shape, with the commit revision", async () => {
    const { env, auditPrefix } = auditScope(suite, "hjson");
    await applyAll(suite, env, [exampleState(), variant(1)]);
    const r = await runCli(["history", "-o", "json", "--limit", "5"], { env });
    expect(r.code, r.stderr).toBe(0);
    const doc = HistoryShape.parse(JSON.parse(r.stdout));
    const stored = await recordsOf(suite.client, auditPrefix);
    expect(doc.records).toEqual(
      [...stored].reverse().map((s) => ({ ...s.record, commit_revision: s.commitRevision })),
    );
    expect(doc.invalid).toEqual([]);
  });

  it("pages through more records than one request reads, at one revision", async () => {
    const { env, auditPrefix } = auditScope(suite, "hpage");
    await applyAll(suite, env, [exampleState()]);
    // 250 records written straight into etcd: many pages
    expect(250).toBeGreaterThan(2 * AUDIT_PAGE);
    const [first] = await recordsOf(suite.client, auditPrefix);
    for (let e = 2; e <= 250; e++)
      await suite.client
        .put(auditKey(auditPrefix, e))
        .value(JSON.stringify({ ...first?.record, epoch: e, changes: [] }));
    const r = await runCli(["history", "-o", "json", "--limit", "230"], { env });
    expect(r.code, r.stderr).toBe(0);
    const epochs = HistoryShape.parse(JSON.parse(r.stdout)).records.map((x) => x.epoch);
    expect(epochs).toEqual(Array.from({ length: 230 }, (_, i) => 250 - i));
  });

  it("no records: says so (exit 0); an invalid record is reported by key, the rest still listed", async () => {
    const { env, auditPrefix } = auditScope(suite, "hbad");
    const empty = await runCli(["history"], { env });
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe(`No audit records under ${auditPrefix}.\n`);
    await applyAll(suite, env, [exampleState()]);
    await suite.client.put(auditKey(auditPrefix, 2)).value("{not json");
    await suite.client.put(`${auditPrefix}junk`).value("{}");
    const r = await runCli(["history", "-o", "json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const doc = HistoryShape.parse(JSON.parse(r.stdout));
    expect(doc.records.map((x) => x.epoch)).toEqual([1]);
    expect(doc.invalid).toEqual([
      { key: `${auditPrefix}junk`, epoch: null, problem: expect.stringContaining("not an audit") },
      { key: auditKey(auditPrefix, 2), epoch: 2, problem: "not JSON" },
    ]);
    const text = await runCli(["history"], { env });
    expect(text.stdout).toContain(`invalid record ${auditKey(auditPrefix, 2)}: not JSON`);
  });

  it("shows who and why escaped: a record's text never reaches the terminal raw", async () => {
    const { env } = auditScope(suite, "hesc", { EDGECTL_USER: "eve\u001b[2J\u202e" });
    const r0 = await runCli(
      ["apply", suite.files.write(exampleState()), "--yes", "--reason", "x\u009b31m"],
      { env },
    );
    expect(r0.code, r0.stderr).toBe(0);
    const r = await runCli(["history"], { env });
    expect(r.stdout).toContain('eve\\u001b[2J\\u202e  apply  reason: "x\\u009b31m"');
    for (const raw of ["\u001b", "\u009b", "\u202e"]) expect(r.stdout.includes(raw)).toBe(false);
  });

  it("--limit must be a whole number from 1 (exit 1)", async () => {
    const { env } = auditScope(suite, "hlim");
    for (const bad of ["0", "-3", "x"]) {
      const r = await runCli(["history", "--limit", bad], { env });
      expect(r.code, bad).toBe(1);
      expect(r.stderr).toContain("--limit");
    }
  });
});
