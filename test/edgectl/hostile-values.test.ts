import { describe, expect, it } from "vitest";
import { MAX_PLAN_VALUE_CHARS } from "../../edgectl/apply/plan-diff.js";
import { auditScope, recordsOf } from "./audit-support.js";
import { exampleState, runCli, useCliSuite } from "./cli-harness.js";

/** What the issue put at `country/FR`: 60 KB of JSON nested 30,000 levels deep. */
const DEEP = `{"primary":${"[".repeat(30_000)}${"]".repeat(30_000)}}`;

describe("etcd values too deep or too large for a structure (the real edgectl, a real etcd)", () => {
  const suite = useCliSuite();

  it("apply and move overwrite or delete a value nested 30,000 levels deep, and record it as text", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "deep");
    const file = suite.files.write(exampleState());
    expect((await runCli(["apply", file, "--yes"], { env })).code).toBe(0);

    // apply without FR in the file deletes it
    await suite.client.put(`${prefix}country/FR`).value(DEEP);
    const deleted = await runCli(["apply", file, "--yes"], { env });
    expect(deleted.stderr).toBe("");
    expect(deleted.code).toBe(0);
    expect(await suite.client.get(`${prefix}country/FR`).string()).toBeNull();

    // apply with FR in the file overwrites it
    await suite.client.put(`${prefix}country/FR`).value(DEEP);
    const withFr = exampleState();
    const fr = { primary: "par-1", fallbacks: ["ams-1"] };
    const fileFr = suite.files.write({ ...withFr, countries: { ...withFr.countries, FR: fr } });
    const overwritten = await runCli(["apply", fileFr, "--yes"], { env });
    expect(overwritten.code, overwritten.stderr).toBe(0);
    expect(JSON.parse((await suite.client.get(`${prefix}country/FR`).string()) ?? "")).toEqual(fr);

    // move overwrites it too
    await suite.client.put(`${prefix}country/FR`).value(DEEP);
    const moved = await runCli(["move", "FR", "--to", "ams-1", "--yes"], { env });
    expect(moved.code, moved.stderr).toBe(0);
    expect(
      JSON.parse((await suite.client.get(`${prefix}country/FR`).string()) ?? ""),
    ).toMatchObject({
      primary: "ams-1",
    });

    // each record keeps the deep value exactly, as its text
    const records = await recordsOf(suite.client, auditPrefix);
    const befores = records.slice(1).map((r) => r.record.changes[0]?.before);
    expect(befores).toEqual([DEEP, DEEP, DEEP]);
    const history = await runCli(["history"], { env });
    expect(history.code, history.stderr).toBe(0);
  }, 60_000);

  it("plan shows a bounded excerpt of a huge value, with its size", async () => {
    const { prefix, env } = auditScope(suite, "huge");
    const file = suite.files.write(exampleState());
    expect((await runCli(["apply", file, "--yes"], { env })).code).toBe(0);
    await suite.client.put(`${prefix}country/FR`).value(DEEP);
    const plan = await runCli(["plan", file], { env });
    expect(plan.code, plan.stderr).toBe(0);
    const line = plan.stdout.split("\n").find((l) => l.includes("country/FR")) ?? "";
    expect(line).toMatch(/^ {2}- country\/FR {2}\(was \{"primary":\[\[\[+…\]* \(60012 bytes\)\)$/);
    expect(line.length).toBeLessThan(MAX_PLAN_VALUE_CHARS + 100);
    // -o json still has the value whole
    const json = await runCli(["plan", file, "-o", "json"], { env });
    const changes = (JSON.parse(json.stdout) as { changes: { key: string; before?: string }[] })
      .changes;
    expect(changes.find((c) => c.key === "country/FR")?.before).toBe(DEEP);
  }, 60_000);

  it("history and rollback name a hand-written record nested 30,000 levels deep as invalid", async () => {
    const { prefix, auditPrefix, env } = auditScope(suite, "deeprec");
    const file = suite.files.write(exampleState());
    expect((await runCli(["apply", file, "--yes"], { env })).code).toBe(0);
    // epoch 2, as if written by an apply that set country/FR to the deep value
    const key = `${auditPrefix}000000000002`;
    const after = `{"primary":${"[".repeat(30_000)}${"]".repeat(30_000)}}`;
    await suite.client.put(`${prefix}epoch`).value("2");
    await suite.client.put(`${prefix}country/FR`).value(after);
    await suite.client
      .put(key)
      .value(
        `{"epoch":2,"rev":1,"at":"2026-12-01T00:00:00Z","by":"x","command":"apply","reason":null,"changes":[{"key":"country/FR","before":null,"after":${after}}]}`,
      );
    const history = await runCli(["history"], { env });
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toContain(`invalid record ${key}: nested over 67 levels deep`);
    const rollback = await runCli(["rollback", "1", "--yes"], { env });
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain(
      `the audit record of epoch 2 (${key}) is invalid: nested over 67 levels deep; nothing written`,
    );
  }, 60_000);
});
