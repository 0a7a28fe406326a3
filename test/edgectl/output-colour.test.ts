import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../../edgectl/run.js";
import { exampleState, runBin, tempFiles } from "./cli-harness.js";

const files = tempFiles();
afterAll(() => files.cleanup());
const ESC = "\u001b[";

/** Runs edgectl in-process with stdout and stderr that claim to be (or not be) terminals. */
async function runOn(argv: string[], env: Record<string, string>, tty: boolean) {
  let stdout = "";
  let stderr = "";
  const code = await run(argv, {
    env,
    stdout: { write: (s: string) => (stdout += s), isTTY: tty },
    stderr: { write: (s: string) => (stderr += s), isTTY: tty },
  });
  return { code, stdout, stderr };
}

describe("colours only on a terminal, never with NO_COLOR, never in JSON mode", () => {
  it("a terminal gets colours, on stdout (results) and stderr (errors)", async () => {
    const ok = await runOn(["validate", files.write(exampleState())], {}, true);
    expect(ok.stdout).toContain(`${ESC}32mvalid${ESC}39m`);
    const bad = await runOn(["validate", "/nonexistent.yaml"], {}, true);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${ESC}31medgectl:${ESC}39m cannot read /nonexistent.yaml`);
  });

  it("NO_COLOR (any non-empty value) or TERM=dumb turns them off on a terminal", async () => {
    for (const env of [{ NO_COLOR: "1" }, { NO_COLOR: "true" }, { TERM: "dumb" }]) {
      const ok = await runOn(["validate", files.write(exampleState())], env, true);
      expect(ok.stdout, JSON.stringify(env)).not.toContain(ESC);
      const bad = await runOn(["validate", "/nonexistent.yaml"], env, true);
      expect(bad.stderr, JSON.stringify(env)).not.toContain(ESC);
    }
  });

  it("no colours off a terminal, and none in JSON mode even on one", async () => {
    const piped = await runOn(["validate", files.write(exampleState())], {}, false);
    expect(piped.stdout).toMatch(/is valid: 3 pools/);
    expect(piped.stdout).not.toContain(ESC);
    const json = await runOn(["validate", "-o", "json", files.write(exampleState())], {}, true);
    expect(json.stdout).not.toContain(ESC);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true });
    const jsonErr = await runOn(["-o", "json", "validate", "/nonexistent.yaml"], {}, true);
    expect(jsonErr.stdout + jsonErr.stderr).not.toContain(ESC);
  });

  it("the real bin colours a real pseudo-terminal and not a pipe, and obeys NO_COLOR", async () => {
    const file = files.write(exampleState());
    const bin = resolve(import.meta.dirname, "../../bin/edgectl.js");
    const { NO_COLOR: _inherited, ...inherited } = process.env;
    // util-linux `script` gives the process a pseudo-terminal as stdout
    const onPty = (env: Record<string, string>) =>
      execFileSync(
        "script",
        ["-qec", `"${process.execPath}" "${bin}" validate "${file}"`, "/dev/null"],
        { encoding: "utf8", env: { ...inherited, TERM: "xterm", ...env } },
      );
    expect(onPty({})).toContain(`${ESC}32mvalid${ESC}39m`);
    expect(onPty({ NO_COLOR: "1" })).not.toContain(ESC);
    const piped = await runBin(["validate", file], { NO_COLOR: "" });
    expect(piped.code).toBe(0);
    expect(piped.stdout).not.toContain(ESC);
  });
});
