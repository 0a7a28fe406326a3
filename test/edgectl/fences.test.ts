import { describe, expect, it } from "vitest";
import type { DesiredState } from "../../core/index.js";
import { ErrorShape } from "../../edgectl/output/shapes/error-shape.js";
import { applyAll, auditScope, markHealthy, recordsOf } from "./audit-support.js";
import { runCli, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();
const POOLS = ["fra-1", "ams-1", "use-1"];
const FENCE = {
  countries: ["DE", "FR"],
  continents: [] as ("EU" | "NA")[],
  regions: ["eu-central", "eu-west"],
  floor: "ams-1",
};

/** DE and FR fenced to the EU pools; _default on use-1 (us-east), which the fence keeps out. */
function fencedState(extra: Partial<DesiredState> = {}): DesiredState {
  return {
    pools: {
      "fra-1": { origin: "https://fra-1.origin.example.com", region: "eu-central" },
      "ams-1": { origin: "https://ams-1.origin.example.com", region: "eu-west" },
      "use-1": { origin: "https://use-1.origin.example.com", region: "us-east" },
    },
    countries: {
      _default: { primary: "use-1", fallbacks: ["ams-1"] },
      DE: { primary: "fra-1", fallbacks: ["ams-1"] },
      FR: { primary: "ams-1", fallbacks: ["fra-1"] },
    },
    fences: { eu: FENCE },
    ...extra,
  };
}

/** A fresh prefix holding {@link fencedState}, pools healthy, FLOOR_POOL inside the fence. */
async function seeded(tag: string, state: DesiredState = fencedState()) {
  const scope = auditScope(suite, tag, { FLOOR_POOL: "ams-1" });
  await markHealthy(suite.client, scope.prefix, POOLS);
  await applyAll(suite, scope.env, [state]);
  return scope;
}

/** The refusal names the country, the rule, the pool and the fence, in text and JSON. */
function expectCrossing(
  r: { code: number; stdout: string; stderr: string },
  rule: string,
  cc = "DE",
) {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr).toContain("would send a fenced country outside its fence");
  expect(r.stderr).toContain(`${rule}: would send ${cc} to pool use-1, outside fence eu`);
}

const crossingDE = (s = fencedState()): DesiredState => ({
  ...s,
  countries: { ...s.countries, DE: { primary: "fra-1", fallbacks: ["use-1"] } },
});

describe("edgectl refuses intent that crosses a fence (docs/reference.md §10)", () => {
  it("validate: exit 1 naming the country, the rule, the pool and the fence (text and JSON)", async () => {
    const ok = await runCli(["validate", suite.files.write(fencedState())], {
      env: { FLOOR_POOL: "ams-1" },
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("fences eu");
    const f = suite.files.write(crossingDE());
    const r = await runCli(["validate", f], { env: { FLOOR_POOL: "ams-1" } });
    expectCrossing(r, "country/DE");
    const j = await runCli(["validate", f, "-o", "json"], { env: { FLOOR_POOL: "ams-1" } });
    expect(j.code).toBe(1);
    const doc = ErrorShape.parse(JSON.parse(j.stdout));
    expect(doc.error.code).toBe("invalid-input");
    // DE's own rule crosses, and so does the _default it would fall to.
    expect(doc.error.details).toEqual([
      "country/DE: would send DE to pool use-1, outside fence eu (regions eu-central, eu-west); ignored for DE",
      "country/_default: would send DE to pool use-1, outside fence eu (regions eu-central, eu-west); ignored for DE",
    ]);
  });

  it("validate: a fence whose floor is outside it, and FLOOR_POOL outside it, are refused", async () => {
    const s = fencedState({ fences: { eu: { ...FENCE, floor: "use-1" } } });
    const r = await runCli(["validate", suite.files.write(s)], { env: { FLOOR_POOL: "use-1" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("fence/eu: floor use-1 is outside the fence");
    expect(r.stderr).toContain("fence/eu: FLOOR_POOL use-1 is outside the fence");
  });

  it("plan and apply: exit 1, nothing written", async () => {
    const { prefix, env } = await seeded("fc-apply");
    const f = suite.files.write(crossingDE());
    expectCrossing(await runCli(["plan", f], { env }), "country/DE");
    expectCrossing(await runCli(["apply", f, "--yes"], { env }), "country/DE");
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("1");
  });

  it("move: exit 1 when the new primary is outside the fence", async () => {
    const { prefix, env } = await seeded("fc-move");
    const r = await runCli(["move", "DE", "--to", "use-1", "--yes"], { env });
    expectCrossing(r, "country/DE");
    expect(JSON.parse((await suite.client.get(`${prefix}country/DE`).string()) ?? "")).toEqual({
      primary: "fra-1",
      fallbacks: ["ams-1"],
    });
  });

  it("boost: exit 1 with --pool outside the fence, and with --percent; nothing written", async () => {
    const { prefix, env } = await seeded("fc-boost");
    expectCrossing(
      await runCli(["boost", "DE", "--pool", "use-1", "--ttl", "1h"], { env }),
      "override/DE",
    );
    expectCrossing(
      await runCli(["boost", "FR", "--pool", "use-1", "--percent", "20", "--ttl", "1h"], { env }),
      "override/FR",
      "FR",
    );
    expect(await suite.client.get(`${prefix}override/DE`).string()).toBeNull();
    expect(await suite.client.get(`${prefix}override/FR`).string()).toBeNull();
    // inside the fence it goes through
    const ok = await runCli(["boost", "DE", "--pool", "ams-1", "--ttl", "1h"], { env });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it("rollback: exit 1 when the restored fence would cover a live boost outside it", async () => {
    const { env } = await seeded("fc-rollback");
    // epoch 2: no fence; a boost sends FR to use-1 (allowed then)
    const open = fencedState();
    await applyAll(suite, env, [{ pools: open.pools, countries: open.countries }]);
    const boost = await runCli(["boost", "FR", "--pool", "use-1", "--ttl", "1h"], { env });
    expect(boost.code, boost.stderr).toBe(0);
    expectCrossing(await runCli(["rollback", "1", "--yes"], { env }), "override/FR", "FR");
  });

  it("apply writes, export, history and rollback carry fence/ keys with epoch and audit record", async () => {
    const { prefix, auditPrefix, env } = await seeded("fc-flow");
    expect(JSON.parse((await suite.client.get(`${prefix}fence/eu`).string()) ?? "")).toEqual({
      countries: ["DE", "FR"],
      continents: [],
      regions: ["eu-central", "eu-west"],
      floor: "ams-1",
    });
    const first = (await recordsOf(suite.client, auditPrefix))[0]?.record;
    expect(first?.changes.map((c) => c.key)).toContain("fence/eu");
    const exported = await runCli(["export", "-o", "json"], { env });
    expect(JSON.parse(exported.stdout).state.fences).toEqual({
      eu: {
        countries: ["DE", "FR"],
        continents: [],
        regions: ["eu-central", "eu-west"],
        floor: "ams-1",
      },
    });
    // the exported file applies as a no-op
    const yaml = await runCli(["export"], { env });
    const again = await runCli(
      ["apply", suite.files.write(yaml.stdout.split("\n").slice(1).join("\n")), "--yes"],
      { env },
    );
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("No changes");
    // a file without the fences section removes the fence, as its own epoch
    const s = fencedState();
    await applyAll(suite, env, [{ pools: s.pools, countries: s.countries }]);
    expect(await suite.client.get(`${prefix}fence/eu`).string()).toBeNull();
    const history = await runCli(["history"], { env });
    expect(history.stdout).toContain("fence/eu");
    const back = await runCli(["rollback", "1", "--yes"], { env });
    expect(back.code, back.stderr).toBe(0);
    expect(await suite.client.get(`${prefix}fence/eu`).string()).not.toBeNull();
  });

  it("explain shows the fence and the pools it removed, through an outage", async () => {
    const { prefix, env } = await seeded("fc-explain");
    // A boost written behind edgectl's back: the compile ignores it for DE.
    await suite.client
      .put(`${prefix}override/DE`)
      .value('{"primary":"use-1","fallbacks":["fra-1"],"reason":"raw"}');
    const r = await runCli(["explain", "DE"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "fence:  eu (regions eu-central, eu-west; floor ams-1; removed use-1)",
    );
    expect(r.stdout).toContain("override/DE is not usable (would send DE to pool use-1");
    expect(r.stdout).toContain("chosen: fra-1");
    // the outage: every EU pool down, DE goes to the fence's floor, never use-1
    for (const p of ["fra-1", "ams-1"])
      await suite.client.put(`${prefix}health/${p}`).value('{"status":"unhealthy"}');
    const j = await runCli(["explain", "DE", "-o", "json"], { env });
    const doc = JSON.parse(j.stdout);
    expect(doc.fence).toEqual({
      name: "eu",
      regions: ["eu-central", "eu-west"],
      floor: "ams-1",
      removed: ["use-1"],
    });
    expect(doc.route).toMatchObject({
      pool: "ams-1",
      degraded: "all-pools-unhealthy",
      fence: "eu",
    });
    expect(doc.reasons).toContain("no pool inside fence eu is left: the fence's floor ams-1");
  });
});
