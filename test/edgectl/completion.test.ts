import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./cli-harness.js";

const BIN = resolve(import.meta.dirname, "../../bin/edgectl.js");
const dir = mkdtempSync(join(tmpdir(), "edgectl-completion-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether a shell is installed (zsh and fish are optional on a developer's machine). */
const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0;

/** The script `edgectl completion SHELL` prints, saved to a file. */
async function script(shell: string): Promise<string> {
  const r = await runCli(["completion", shell], { env: {} });
  expect(r.code, r.stderr).toBe(0);
  const path = join(dir, `edgectl.${shell}`);
  writeFileSync(path, r.stdout);
  return path;
}

/** Runs the bash completion function for a command line (the last word is being completed). */
function bashComplete(line: string[]): string[] {
  const words = line.map((w) => `'${w}'`).join(" ");
  const out = execFileSync(
    "bash",
    [
      "-c",
      `source <("${process.execPath}" "${BIN}" completion bash) && COMP_WORDS=(${words}) && COMP_CWORD=${line.length - 1} && _edgectl && printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { encoding: "utf8" },
  );
  return out.split("\n").filter(Boolean);
}

describe("edgectl completion", () => {
  it("bash: the built bin's script loads in real bash and registers edgectl", () => {
    const out = execFileSync(
      "bash",
      ["-c", `source <("${process.execPath}" "${BIN}" completion bash); complete -p edgectl`],
      { encoding: "utf8" },
    );
    expect(out.trim()).toBe("complete -o default -F _edgectl edgectl");
  });

  it("bash: completes subcommands, options, option choices and argument choices", () => {
    expect(bashComplete(["edgectl", ""])).toEqual([
      "validate",
      "plan",
      "apply",
      "move",
      "canary",
      "history",
      "rollback",
      "export",
      "explain",
      "boost",
      "unboost",
      "heartbeat",
      "observe",
      "purge",
      "top",
      "status",
      "completion",
    ]);
    expect(bashComplete(["edgectl", "pl"])).toEqual(["plan"]);
    expect(bashComplete(["edgectl", "-o", "json", "ex"])).toEqual(["export", "explain"]);
    expect(bashComplete(["edgectl", "boost", "DE", "--p"])).toEqual([
      "--prefix",
      "--pool",
      "--percent",
    ]);
    expect(bashComplete(["edgectl", "plan", "-o", ""])).toEqual(["text", "json"]);
    expect(bashComplete(["edgectl", "completion", "f"])).toEqual(["fish"]);
    expect(bashComplete(["edgectl", "--ver"])).toEqual(["--version"]);
  });

  it("zsh: the script is valid zsh and registers _edgectl with compinit", async () => {
    const path = await script("zsh");
    if (!has("zsh")) {
      // zsh is not installed here: only the script's form can be checked
      expect(execFileSync("head", ["-1", path], { encoding: "utf8" })).toBe("#compdef edgectl\n");
      return;
    }
    execFileSync("zsh", ["-n", path]);
    const out = execFileSync(
      "zsh",
      [
        "-fc",
        `autoload -Uz compinit && compinit -u -d "${dir}/zcompdump" && source "${path}" && print -r -- $_comps[edgectl]`,
      ],
      { encoding: "utf8" },
    );
    expect(out.trim()).toBe("_edgectl");
  });

  it("fish: the script is valid fish and completes subcommands and choices", async () => {
    const path = await script("fish");
    if (!has("fish")) {
      // fish is not installed here: only the script's form can be checked
      expect(
        execFileSync("grep", ["-c", "^complete -c edgectl", path], { encoding: "utf8" }),
      ).not.toBe("0\n");
      return;
    }
    execFileSync("fish", ["-n", path]);
    const complete = (line: string) =>
      execFileSync("fish", ["-c", `source "${path}"; complete -C '${line}'`], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\t")[0]);
    expect(complete("edgectl pl")).toEqual(["plan"]);
    expect(complete("edgectl plan -o ").sort()).toEqual(["json", "text"]);
    expect(complete("edgectl completion ").sort()).toEqual(["bash", "fish", "zsh"]);
  });

  it("-o json wraps the script in the completion shape", async () => {
    const r = await runCli(["completion", "bash", "-o", "json"], { env: {} });
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { shell: string; script: string };
    expect(doc.shell).toBe("bash");
    expect(doc.script).toContain("complete -o default -F _edgectl edgectl");
  });
});
