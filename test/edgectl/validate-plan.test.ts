import { describe, expect, it } from "vitest";
import { exampleState, runBin, runCli, uniquePrefix, useCliSuite } from "./cli-harness.js";

const ctx = useCliSuite();

describe("edgectl validate", () => {
  it("exits 0 for a valid YAML file and for the same state as JSON", async () => {
    const yaml = ctx.files.write(exampleState());
    const json = ctx.files.write(JSON.stringify(exampleState()), "json");
    for (const f of [yaml, json]) {
      const r = await runCli(["validate", f], { env: {} });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain("is valid");
    }
  });

  it("exits 1 and names the key of every problem", async () => {
    const bad = exampleState() as { countries: Record<string, unknown> };
    bad.countries.DE = { primary: "fra-1", fallbacks: ["ams-1", "fra-9"] };
    bad.countries.ZZ = { primary: "fra-1" };
    const r = await runCli(["validate", ctx.files.write(bad)], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('countries.DE.fallbacks[1]: unknown pool "fra-9"');
    expect(r.stderr).toContain("countries.ZZ:");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("exits 1 for an origin on port 0, naming the pool", async () => {
    const bad = exampleState() as { pools: Record<string, unknown> };
    bad.pools["fra-1"] = { origin: "https://host:0" };
    const r = await runCli(["validate", ctx.files.write(bad)], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("pools.fra-1.origin: port must be 1-65535");
  });

  it("reports a YAML syntax error with line and column, without a stack trace", async () => {
    const f = ctx.files.write(
      "pools:\n  fra-1: { origin: https://fra-1.origin.example.com\ncountries: {}\n",
    );
    const r = await runCli(["validate", f], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${f.replace(/[.]/g, "\\.")}:\\d+:\\d+: syntax error`));
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("rejects duplicate keys in YAML and JSON with their position", async () => {
    const y = ctx.files.write(
      "pools:\n  par-1: { origin: https://par-1.origin.example.com }\n  par-1: { origin: https://x.example.com }\ncountries:\n  _default: { primary: par-1 }\n",
    );
    const r = await runCli(["validate", y], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${y}:3:3: duplicate key`);
    const j = ctx.files.write('{"pools": {}, "pools": {}, "countries": {}}', "json");
    const rj = await runCli(["validate", j], { env: {} });
    expect(rj.code).toBe(1);
    expect(rj.stderr).toContain(`${j}:1:15: duplicate key`);
  });

  it("exits 1 for a missing file, unknown commands and unknown flags; --help exits 0", async () => {
    const missing = await runCli(["validate", "/nonexistent/x.yaml"], { env: {} });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("cannot read /nonexistent/x.yaml (ENOENT)");
    const unknown = await runCli(["frobnicate"], { env: {} });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    const flag = await runCli(["validate", "--bogus", "x.yaml"], { env: {} });
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain("unknown option '--bogus'");
    for (const cmd of [
      "validate",
      "plan",
      "apply",
      "export",
      "explain",
      "boost",
      "unboost",
      "heartbeat",
      "status",
    ]) {
      const help = await runCli([cmd, "--help"], { env: {} });
      expect(help.code, cmd).toBe(0);
      expect(help.stdout, cmd).toContain(`Usage: edgectl ${cmd}`);
      expect(help.stdout, cmd).toContain("--endpoints <urls>");
    }
    const top = await runCli(["--help"], { env: {} });
    expect(top.code).toBe(0);
    for (const line of [
      "2  apply: conflict",
      "3  apply: lock/apply is held",
      "4  etcd unavailable: no member answered; nothing written",
      "5  apply: outcome unknown, the commit may have landed (run plan)",
      "ETCD_ENDPOINTS",
      "--endpoints wins",
    ])
      expect(top.stdout).toContain(line);
  });

  it("works through the real bin as a child process (0 valid, 1 invalid)", async () => {
    const good = await runBin(["validate", ctx.files.write(exampleState())], {});
    expect(good.code, good.stderr).toBe(0);
    const bad = await runBin(["validate", ctx.files.write("a: [1,\n")], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/:\d+:\d+: syntax error/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("edgectl plan", () => {
  it("prints added/changed/removed keys and the edge effect under current health", async () => {
    const prefix = uniquePrefix("plan");
    const env = ctx.envFor(prefix);
    const applied = await runCli(["apply", ctx.files.write(exampleState()), "--yes"], { env });
    expect(applied.code, applied.stderr).toBe(0);
    await ctx.client.put(`${prefix}health/fra-1`).value('{"status":"healthy"}');
    await ctx.client.put(`${prefix}health/ams-1`).value('{"status":"healthy"}');
    const next = exampleState() as {
      pools: Record<string, unknown>;
      countries: Record<string, unknown>;
    };
    next.countries.DE = { primary: "ams-1", fallbacks: ["fra-1"] };
    next.countries.FR = { primary: "par-1" };
    delete next.pools["par-1"];
    next.countries._default = { primary: "ams-1" };
    next.countries.FR = { primary: "fra-1" };
    const r = await runCli(["plan", ctx.files.write(next)], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/~ country\/DE .*→ \{"primary":"ams-1","fallbacks":\["fra-1"\]\}/);
    expect(r.stdout).toContain('+ country/FR  {"primary":"fra-1","fallbacks":[]}');
    expect(r.stdout).toContain("- pool/par-1");
    expect(r.stdout).toContain("DE: fra-1 (country/DE) → ams-1 (country/DE)");
    // FR had no rule: it followed _default (ams-1) and now gets fra-1
    expect(r.stdout).toContain("FR: ams-1 (country/_default) → fra-1 (country/FR)");
    // plan writes nothing
    const de = await ctx.client.get(`${prefix}country/DE`).string();
    expect(JSON.parse(de ?? "null")).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
  });

  it("exits 1 for an invalid file and 0 with 'No changes' when etcd matches", async () => {
    const prefix = uniquePrefix("plan2");
    const env = ctx.envFor(prefix);
    const f = ctx.files.write(exampleState());
    expect((await runCli(["apply", f, "--yes"], { env })).code).toBe(0);
    const same = await runCli(["plan", f], { env });
    expect(same.code).toBe(0);
    expect(same.stdout).toContain("No changes");
    const invalid = await runCli(["plan", ctx.files.write({ pools: {}, countries: {} })], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("countries._default: required rule is missing");
  });

  it("reports an unreachable etcd in one line naming every endpoint, exit 4", async () => {
    const r = await runCli(["plan", ctx.files.write(exampleState())], {
      env: {
        ETCD_ENDPOINTS: "http://127.0.0.1:1,127.0.0.1:9",
        EDGECTL_ETCD_TIMEOUT_MS: "1500",
      },
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /^edgectl: etcd unavailable, nothing written: no etcd member answered/,
    );
    expect(r.stderr).toContain("http://127.0.0.1:1 → GRPCUnavailableError");
    expect(r.stderr).toContain("http://127.0.0.1:9 → GRPCUnavailableError");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("edgectl validate: origins a Worker cannot fetch", () => {
  it("exits 1 for an IP-literal origin, naming the pool and error 1003", async () => {
    const bad = exampleState() as { pools: Record<string, unknown> };
    bad.pools["fra-1"] = { origin: "https://203.0.113.7" };
    const r = await runCli(["validate", ctx.files.write(bad)], { env: {} });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pools\.fra-1\.origin: an IP-literal host.*error 1003/);
    const json = await runCli(["validate", ctx.files.write(bad), "-o", "json"], { env: {} });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error.details.join("\n")).toContain("pools.fra-1.origin");
  });

  it("accepts a loopback origin and warns on stderr that production cannot fetch it", async () => {
    const local = exampleState() as { pools: Record<string, unknown> };
    local.pools["fra-1"] = { origin: "http://127.0.0.1:9101" };
    const r = await runCli(["validate", ctx.files.write(local)], { env: {} });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^warning: pools\.fra-1\.origin: a loopback address.*production/m);
    expect(r.stdout).not.toContain("warning");
  });
});

describe("edgectl plan and apply: origins a Worker cannot fetch", () => {
  it("refuse an IP-literal origin and write nothing; a loopback origin applies with a warning", async () => {
    const prefix = uniquePrefix("ip-origin");
    const env = ctx.envFor(prefix);
    const bad = exampleState() as { pools: Record<string, unknown> };
    bad.pools["fra-1"] = { origin: "http://[2001:db8::7]:8080" };
    const badFile = ctx.files.write(bad);
    for (const cmd of [["plan"], ["apply", "--yes"]]) {
      const r = await runCli([cmd[0] as string, badFile, ...cmd.slice(1)], { env });
      expect(r.code, cmd[0]).toBe(1);
      expect(r.stderr, cmd[0]).toMatch(/pools\.fra-1\.origin: an IP-literal host/);
    }
    expect((await ctx.client.getAll().prefix(prefix).keys()).length).toBe(0);
    const local = exampleState() as { pools: Record<string, unknown> };
    local.pools["fra-1"] = { origin: "http://127.0.0.1:9101" };
    const applied = await runCli(["apply", ctx.files.write(local), "--yes"], { env });
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/warning: pools\.fra-1\.origin: a loopback address/);
    expect(JSON.parse((await ctx.client.get(`${prefix}pool/fra-1`).string()) ?? "null")).toEqual({
      origin: "http://127.0.0.1:9101",
    });
  });
});
