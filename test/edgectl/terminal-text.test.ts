import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { painter } from "../../edgectl/output/colour.js";
import { terminalJson, terminalText } from "../../edgectl/output/terminal-text.js";
import { terminalYaml } from "../../edgectl/output/terminal-yaml.js";
import { run } from "../../edgectl/run.js";
import { auditScope } from "./audit-support.js";
import { type CliResult, exampleState, runBin, useCliSuite } from "./cli-harness.js";

/** What a hostile etcd value holds: a window-title change, a screen clear, and their C1 twin. */
const TITLE = "\u001b]0;pwned\u0007";
const CLEAR = "\u001b[2J";
const CSI = "\u009b2J";
const BIDI = "\u202e";

/** Every raw character that would let text drive or reorder a terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are what must never appear
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2028\u2029]/;

/** Asserts nothing raw reached either stream of a run. */
function expectNoRaw(name: string, r: CliResult): void {
  expect({ name, stdout: RAW.exec(r.stdout)?.[0] ?? null }).toEqual({ name, stdout: null });
  expect({ name, stderr: RAW.exec(r.stderr)?.[0] ?? null }).toEqual({ name, stderr: null });
}

describe("terminalText", () => {
  it("escapes every control and invisible character but newline and tab", () => {
    expect(terminalText(`a${TITLE}b${CLEAR}c${CSI}d${BIDI}e\r\u2028\tf\ng`)).toBe(
      "a\\u001b]0;pwned\\u0007b\\u001b[2Jc\\u009b2Jd\\u202ee\\u000d\\u2028\tf\ng",
    );
  });

  it("lets only edgectl's own colours through: paint's marks become colours", () => {
    const paint = painter(true);
    const line = `${paint("green", "+ ok")} ${paint("bold", "b")} ${paint("dim", "d")} \u001b[8mhidden`;
    expect(terminalText(line)).toBe(
      "\u001b[32m+ ok\u001b[39m \u001b[1mb\u001b[22m \u001b[2md\u001b[22m \\u001b[8mhidden",
    );
  });

  it("escapes the very sequences paint writes when any other text holds them (SGR included)", () => {
    const red = "\u001b[31mRED\u001b[39m \u001b[1mbold\u001b[22m \u001b[0m";
    expect(terminalText(`held by other${red}`)).toBe(
      "held by other\\u001b[31mRED\\u001b[39m \\u001b[1mbold\\u001b[22m \\u001b[0m",
    );
    // inside a painted line as well
    const painted = painter(true)("red", `other${red}`);
    expect(terminalText(painted)).toBe(
      "\u001b[31mother\\u001b[31mRED\\u001b[39m \\u001b[1mbold\\u001b[22m \\u001b[0m\u001b[39m",
    );
  });

  it("a colour mark cannot be forged: paint's private-use character alone stays text", () => {
    expect(terminalText("\ue00031\ue000x\ue000:31\ue000")).toBe("\ue00031\ue000x\ue000:31\ue000");
  });
});

describe("terminalJson and terminalYaml", () => {
  const value = {
    [`k${CLEAR}`]: [`v${TITLE}`, `c1${CSI}`, `bidi${BIDI}`, "line\u2028sep", "astral\u{e0001}"],
    plain: "fra-1",
    multi: "a\nb",
  };

  it("JSON: the same document, nothing raw", () => {
    const text = terminalJson(value);
    expect(RAW.test(text)).toBe(false);
    expect(JSON.parse(text)).toEqual(value);
  });

  it("YAML: the same document, nothing raw", () => {
    const text = terminalYaml(value);
    expect(RAW.test(text)).toBe(false);
    expect(parse(text)).toEqual(value);
  });
});

describe("text from etcd never reaches the terminal raw (the real edgectl, a real etcd)", () => {
  const suite = useCliSuite();

  it("plan, apply, explain, export, status, move and rollback escape keys and values", async () => {
    const { prefix, env } = auditScope(suite, "esc");
    const file = suite.files.write(exampleState());
    const runs: [string, CliResult][] = [];
    const run = async (name: string, argv: string[], want = 0) => {
      const r = await runBin(argv, env);
      expect({ name, code: r.code, stderr: r.stderr }).toMatchObject({ name, code: want });
      runs.push([name, r]);
      return r;
    };

    await run("apply (clean)", ["apply", file, "--yes"]);
    // Written behind edgectl's back: a hostile invalid rule, a key, and a valid pool's region.
    const hostileRule = `{"primary":"fra-1${TITLE}","fallbacks":[]}${CLEAR}`;
    await suite.client.put(`${prefix}country/DE`).value(hostileRule);
    await suite.client.put(`${prefix}country/${CLEAR}${BIDI}`).value(`x${CSI}`);
    await suite.client
      .put(`${prefix}pool/evil-1`)
      .value(JSON.stringify({ origin: "https://evil-1.example.com", region: `eu${TITLE}${CSI}` }));

    const plan = await run("plan", ["plan", file]);
    expect(plan.stdout).toContain(`~ country/DE  {"primary":"fra-1\\u001b]0;pwned\\u0007"`);
    expect(plan.stdout).toContain("- country/\\u001b[2J\\u202e  (was x\\u009b2J)");
    expect(plan.stdout).toContain("\\u001b]0;pwned\\u0007\\u009b2J");

    const planJson = await run("plan -o json", ["plan", file, "-o", "json"]);
    const changes = (
      JSON.parse(planJson.stdout) as { changes?: { key: string; before?: string }[] }
    ).changes;
    if (changes) {
      expect(changes.find((c) => c.key === "country/DE")?.before).toBe(hostileRule);
    }

    await run("explain DE", ["explain", "DE", "--no-kv"]);
    const exported = await run("export", ["export"]);
    const doc = parse(exported.stdout) as { pools: Record<string, { region?: string }> };
    expect(doc.pools["evil-1"]?.region).toBe(`eu${TITLE}${CSI}`);
    const exportedJson = await run("export -o json", ["export", "-o", "json"]);
    expect(
      (JSON.parse(exportedJson.stdout) as { state: { pools: Record<string, { region?: string }> } })
        .state.pools["evil-1"]?.region,
    ).toBe(`eu${TITLE}${CSI}`);
    await run("status", ["status", "--no-pusher"], 1);
    await run("move", ["move", "FR", "--to", "evil-1", "--yes"]);
    await run("rollback", ["rollback", "1", "--yes"], 1);
    await run("apply", ["apply", file, "--yes"]);

    for (const [name, r] of runs) expectNoRaw(name, r);
  }, 60_000);
});

describe("a lock holder's text never colours the terminal (a real etcd)", () => {
  const suite = useCliSuite();

  it("apply names a hostile lock/apply holder escaped, on a terminal with colours on", async () => {
    const { prefix, env } = auditScope(suite, "lockesc");
    const file = suite.files.write(exampleState());
    await suite.client.put(`${prefix}lock/apply`).value("other\u001b[31mRED\u001b[0m");
    let stderr = "";
    const code = await run(["apply", file, "--yes"], {
      env,
      stdout: { write: () => true, isTTY: true },
      stderr: { write: (s: string) => (stderr += s), isTTY: true },
    });
    expect(code).toBe(3);
    expect(stderr).toContain("locked: lock/apply is held by other\\u001b[31mRED\\u001b[0m;");
    // edgectl's own red, and nothing else
    expect(stderr.split("\u001b").length - 1).toBe(2);
    expect(stderr.startsWith("\u001b[31medgectl:\u001b[39m ")).toBe(true);
  });
});
