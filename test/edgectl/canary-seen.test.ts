import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CanaryJudgement } from "../../core/index.js";
import { PlanShape } from "../../edgectl/output/shapes/plan-shape.js";
import type { StatusResult } from "../../edgectl/output/shapes/status-shape.js";
import { applyAll, auditScope, markHealthy } from "./audit-support.js";
import { exampleState, runCli, useCliSuite } from "./cli-harness.js";

// docs/reference.md §13: the running canary, its share, state and gates' figures, as
// `edgectl status` and `edgectl explain` show them.

const suite = useCliSuite();
const persist = mkdtempSync(join(tmpdir(), "edgectl-canary-seen-"));
afterAll(() => rmSync(persist, { recursive: true, force: true }));

describe("edgectl status and explain show the canary (real etcd)", () => {
  it("frozen without a judge, judged with the figures once one judges; the judge's text escaped", async () => {
    const scope = auditScope(suite, "seen", {
      KV_SINK: "local",
      KV_LOCAL_PERSIST: persist,
      KV_NAMESPACE_ID: "canary-seen",
    });
    const { prefix, env } = scope;
    await markHealthy(suite.client, prefix, ["fra-1", "ams-1", "par-1"]);
    await applyAll(suite, env, [exampleState()]);
    const moved = await runCli(["move", "DE", "--to", "ams-1", "--canary", "10", "--yes"], {
      env,
    });
    expect(moved.code, moved.stderr).toBe(0);

    const frozen = await runCli(["explain", "DE"], { env });
    expect(frozen.stdout).toContain("canary c2: 10 % of its routes' viewers for");
    expect(frozen.stdout).toContain("FROZEN: no judge: canary/judgement is absent");
    expect(frozen.stdout).toContain("its viewers of this route go to ams-1 (country/DE)");
    // a route the canary leaves alone says nothing of it
    expect((await runCli(["explain", "FR"], { env })).stdout).not.toContain("canary c2");
    const before = JSON.parse(
      (await runCli(["status", "--no-pusher", "-o", "json"], { env })).stdout,
    ) as StatusResult;
    expect(before.canary).toMatchObject({ id: "c2", share: 10, state: "frozen", verdict: null });

    const judgement: CanaryJudgement = {
      id: "c2",
      verdict: "passing",
      judged_at: new Date().toISOString(),
      passing_since: "2026-12-07T10:00:00.000Z",
      canary: { samples: 230, error_ratio: 0, p90_ms: 250 },
      stable: { samples: 2100, error_ratio: 0.001, p90_ms: 200 },
      countries: ["DE"],
      minutes: 3,
      detail: "gates hold: p90 250 ms <= 300 ms \u001b[2J",
      judge: "obs-1:7 observing https://edge.example.com",
    };
    await suite.client.put(`${prefix}canary/judgement`).value(JSON.stringify(judgement));
    const judged = await runCli(["explain", "DE"], { env });
    expect(judged.stdout).toContain("judged passing since 2026-12-07T10:00:00.000Z: gates hold");
    expect(judged.stdout).not.toContain("\u001b");
    const text = await runCli(["status", "--no-pusher"], { env });
    expect(text.stdout).toContain("canary c2: 10 %");
    expect(text.stdout).not.toContain("\u001b[2J");
    const after = JSON.parse(
      (await runCli(["status", "--no-pusher", "-o", "json"], { env })).stdout,
    ) as StatusResult;
    expect(after.canary).toMatchObject({
      id: "c2",
      state: "judging",
      frozen: null,
      verdict: "passing",
      canary_side: judgement.canary,
      stable_side: judgement.stable,
    });
  });

  it("plan --canary shows both sides of each changed route; a fence change is refused at plan time", async () => {
    const { prefix, env } = auditScope(suite, "plan");
    await markHealthy(suite.client, prefix, ["fra-1", "ams-1", "par-1"]);
    await applyAll(suite, env, [exampleState()]);
    const moved = exampleState();
    moved.countries.DE = { primary: "par-1", fallbacks: ["fra-1"] };
    const file = suite.files.write(moved);
    const text = await runCli(["plan", file, "--canary", "5", "--for", "2m"], { env });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      "DE: stable 95 % → fra-1 (country/DE), canary 5 % → par-1 (country/DE)",
    );
    expect(text.stdout).toContain("promoted after 120 s of passing gates");
    const json = PlanShape.parse(
      JSON.parse((await runCli(["plan", file, "--canary", "5", "-o", "json"], { env })).stdout),
    );
    expect(json.canary).toMatchObject({
      share: 5,
      for_s: 600,
      sides: [
        {
          country: "DE",
          stable: { percent: 95, pool: "fra-1" },
          canary: { percent: 5, pool: "par-1" },
        },
      ],
    });
    // without --canary the plan is what it was
    expect(JSON.parse((await runCli(["plan", file, "-o", "json"], { env })).stdout).canary).toBe(
      undefined,
    );
    const fenced = {
      ...exampleState(),
      fences: { eu: { countries: ["DE"], regions: ["eu-central"], floor: "fra-1" } },
    };
    const refused = await runCli(["plan", suite.files.write(fenced), "--canary", "5"], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("a canary changes only pool/, country/ and continent/ keys");
    expect((await runCli(["plan", file, "--canary", "60"], { env })).code).toBe(1);
  });
});
