import { describe, expect, it } from "vitest";
import { CanarySchema, compile, type Snapshot } from "../../core/index.js";
import { CanaryStatusShape } from "../../edgectl/output/shapes/canary-shape.js";
import { applyAll, auditScope, intentOf, markHealthy, recordsOf } from "./audit-support.js";
import { exampleState, runCli, useCliSuite } from "./cli-harness.js";

const suite = useCliSuite();
const POOLS = ["fra-1", "ams-1", "par-1"];

async function seeded(tag: string) {
  const scope = auditScope(suite, tag);
  await markHealthy(suite.client, scope.prefix, POOLS);
  await applyAll(suite, scope.env, [exampleState()]);
  return scope;
}

const canaryOf = async (prefix: string) => {
  const text = await suite.client.get(`${prefix}canary/current`).string();
  return text === null ? null : CanarySchema.parse(JSON.parse(text));
};

/** The prefix compiled as every pusher compiles it (etcd read at one revision). */
async function compiled(prefix: string) {
  const res = await suite.client.getAll().prefix(prefix).exec();
  const snapshot: Snapshot = {
    revision: Number(res.header.revision),
    entries: res.kvs.map((kv) => ({ key: kv.key.toString("utf8"), value: kv.value })),
  };
  return compile(snapshot, {
    prefix,
    floorPool: "par-1",
    originTemplate: "https://{pool}.origin.example.com",
    now: new Date(),
    carried: null,
  }).map;
}

describe("edgectl move --canary and edgectl canary (docs/reference.md §13, real etcd)", () => {
  it("commits the move as a canary: intent untouched, canary/current and the epoch written, audited; the map carries both sides", async () => {
    const { prefix, auditPrefix, env } = await seeded("cn1");
    const before = await intentOf(suite.client, prefix);
    const r = await runCli(
      [
        "move",
        "DE",
        "--to",
        "ams-1",
        "--canary",
        "10",
        "--for",
        "90s",
        "--gate",
        "errors<=+2pt",
        "--reason",
        "try ams",
        "--yes",
      ],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("DE: fra-1 (country/DE) → ams-1 (country/DE)");
    expect(r.stdout).toContain("Canary c2: 10 %");
    expect(await intentOf(suite.client, prefix)).toEqual(before);
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("2");
    const canary = await canaryOf(prefix);
    expect(canary).toMatchObject({
      id: "c2",
      epoch: 2,
      share: 10,
      for_s: 90,
      gates: { errors_pt: 2, p90_factor: 1.25, p90_plus_ms: 50, min_samples: 200 },
      by: "tester",
      reason: "try ams",
    });
    expect(canary?.changes.map((c) => c.key)).toEqual(["country/DE"]);
    const last = (await recordsOf(suite.client, auditPrefix)).at(-1)?.record;
    expect(last).toMatchObject({ epoch: 2, command: "move", reason: "try ams" });
    expect(last?.changes.map((c) => c.key)).toEqual(["canary/current"]);
    const map = await compiled(prefix);
    expect(map.countries.DE?.pool).toBe("fra-1");
    expect(map.canary).toMatchObject({ id: "c2", share: 10, countries: { DE: { pool: "ams-1" } } });
    const status = await runCli(["canary", "status", "-o", "json"], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(CanaryStatusShape.parse(JSON.parse(status.stdout))).toMatchObject({
      state: "running",
      canary: { id: "c2", share: 10 },
    });
  });

  it("one canary at a time: a plain apply, a move and another canary exit 2 naming it; nothing written", async () => {
    const { prefix, env } = await seeded("cn2");
    expect(
      (await runCli(["move", "DE", "--to", "ams-1", "--canary", "5", "--yes"], { env })).code,
    ).toBe(0);
    const other = {
      ...exampleState(),
      countries: { ...exampleState().countries, FR: { primary: "par-1", fallbacks: [] } },
    };
    for (const args of [
      ["apply", suite.files.write(other), "--yes"],
      ["move", "FR", "--to", "par-1", "--yes"],
      ["move", "FR", "--to", "par-1", "--canary", "5", "--yes"],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain("canary c2 (5 % since");
      expect(r.stderr).toContain("nothing written");
    }
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("2");
  });

  it("promote commits the canary's intent as a plain apply would, and removes the canary", async () => {
    const { prefix, auditPrefix, env } = await seeded("cn3");
    expect(
      (await runCli(["move", "DE", "--to", "ams-1", "--canary", "10", "--yes"], { env })).code,
    ).toBe(0);
    const r = await runCli(["canary", "promote", "--id", "c2", "--reason", "looks good"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Canary c2 promoted");
    expect(JSON.parse((await suite.client.get(`${prefix}country/DE`).string()) ?? "null")).toEqual({
      primary: "ams-1",
      fallbacks: ["fra-1", "par-1"],
    });
    expect(await canaryOf(prefix)).toBeNull();
    expect(await suite.client.get(`${prefix}epoch`).string()).toBe("3");
    const last = (await recordsOf(suite.client, auditPrefix)).at(-1)?.record;
    expect(last).toMatchObject({ epoch: 3, command: "canary-promote", reason: "looks good" });
    expect(last?.changes.map((c) => c.key)).toEqual(["canary/current", "country/DE"]);
    const map = await compiled(prefix);
    expect(map.countries.DE?.pool).toBe("ams-1");
    expect(map.canary).toBeUndefined();
    // edgectl rollback walks back over the canary's records to the intent before it
    const back = await runCli(["rollback", "1", "--yes"], { env });
    expect(back.code, back.stderr).toBe(0);
    expect(
      JSON.parse((await suite.client.get(`${prefix}country/DE`).string()) ?? "null").primary,
    ).toBe("fra-1");
  });

  it("abort removes the canary and leaves the stable intent as it was", async () => {
    const { prefix, auditPrefix, env } = await seeded("cn4");
    const before = await intentOf(suite.client, prefix);
    expect(
      (await runCli(["move", "DE", "--to", "ams-1", "--canary", "10", "--yes"], { env })).code,
    ).toBe(0);
    const wrongId = await runCli(["canary", "abort", "--id", "c9"], { env });
    expect(wrongId.code).toBe(2);
    const r = await runCli(["canary", "abort", "--reason", "cold cache"], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(await canaryOf(prefix)).toBeNull();
    expect(await intentOf(suite.client, prefix)).toEqual(before);
    const last = (await recordsOf(suite.client, auditPrefix)).at(-1)?.record;
    expect(last).toMatchObject({ epoch: 3, command: "canary-abort", reason: "cold cache" });
    expect((await compiled(prefix)).canary).toBeUndefined();
    const none = await runCli(["canary", "abort"], { env });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no canary is running");
  });

  it("refuses bad canary flags, and a canary across a fence, at plan time; nothing written", async () => {
    const { prefix, env } = await seeded("cn5");
    for (const [args, says] of [
      [["--canary", "0"], "--canary: a whole percent from 1 to 50"],
      [["--canary", "60"], "--canary: a whole percent from 1 to 50"],
      [["--canary", "10", "--gate", "p90<=x0.5"], "--gate:"],
      [["--canary", "10", "--for", "soon"], "--for:"],
      [["--for", "10m"], "--for needs --canary"],
    ] as const) {
      const r = await runCli(["move", "DE", "--to", "ams-1", ...args, "--yes"], { env });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(says);
    }
    const base = exampleState();
    await markHealthy(suite.client, prefix, ["use-1"]);
    const fenced = {
      pools: {
        "fra-1": { origin: "https://fra-1.origin.example.com", region: "eu-central" },
        "ams-1": { origin: "https://ams-1.origin.example.com", region: "eu-west" },
        "par-1": { origin: "https://par-1.origin.example.com", region: "eu-west" },
        "use-1": { origin: "https://use-1.origin.example.com", region: "us-east" },
      },
      countries: base.countries,
      fences: { eu: { countries: ["DE"], regions: ["eu-central", "eu-west"], floor: "ams-1" } },
    };
    const setup = await runCli(["apply", suite.files.write(fenced), "--yes"], { env });
    expect(setup.code, setup.stderr).toBe(0);
    const across = await runCli(["move", "DE", "--to", "use-1", "--canary", "10", "--yes"], {
      env,
    });
    expect(across.code, across.stderr).toBe(1);
    expect(across.stderr).toContain("would send a fenced country outside its fence");
    expect(across.stderr).toContain("outside fence eu");
    expect(await canaryOf(prefix)).toBeNull();
  });
});
