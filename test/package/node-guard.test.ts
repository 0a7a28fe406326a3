import { execFile, execFileSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const FLOOR = /(\d+)\.(\d+)/.exec(
  (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } })
    .engines.node,
);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function older(version: string): boolean {
  const [a = 0, b = 0] = version.split(".").map(Number);
  const [major, minor] = [Number(FLOOR?.[1]), Number(FLOOR?.[2])];
  return a < major || (a === major && b < minor);
}

/**
 * A Node older than the package's `engines`, and the floor a copy of the package must declare:
 * the machine's /usr/bin/node when it is older (Debian's 18 or 20), else this Node with the
 * copy's floor raised above it.
 */
function oldNode(): { node: string; version: string; engines: string } {
  try {
    const version = execFileSync("/usr/bin/node", ["-p", "process.versions.node"], {
      encoding: "utf8",
    }).trim();
    if (older(version)) return { node: "/usr/bin/node", version, engines: `>=${FLOOR?.[0]}` };
  } catch {
    // no /usr/bin/node
  }
  return { node: process.execPath, version: process.versions.node, engines: ">=99.0" };
}

/** A copy of the package as `npm install` lays it out: bin/, package.json and a stub dist/. */
function packageCopy(engines: string): string {
  const dir = mkdtempSync(join(tmpdir(), "node-guard-"));
  dirs.push(dir);
  cpSync(join(ROOT, "bin"), join(dir, "bin"), { recursive: true });
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as object;
  writeFileSync(join(dir, "package.json"), JSON.stringify({ ...pkg, engines: { node: engines } }));
  mkdirSync(join(dir, "dist"));
  for (const name of ["edgectl", "edge-pusher"]) {
    writeFileSync(join(dir, "dist", `${name}.js`), 'process.stdout.write("bundle ran\\n");\n');
  }
  return dir;
}

function runBin(
  node: string,
  bin: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      node,
      [bin, ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }, timeout: 20_000 },
      (_err, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }),
    );
  });
}

describe("bin/launch.js on an unsupported Node", () => {
  for (const name of ["edgectl", "edge-pusher"]) {
    it(`an installed ${name} prints one line naming the Node it needs and exits 1`, async () => {
      const old = oldNode();
      const dir = packageCopy(old.engines);
      const r = await runBin(old.node, join(dir, "bin", `${name}.js`), ["--version"]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      const floor = /(\d+\.\d+)/.exec(old.engines)?.[1];
      expect(r.stderr).toBe(
        `${name}: needs Node.js ${floor} or newer (this is ${old.version} at ${old.node})\n`,
      );
    });
  }

  it("in a checkout, re-runs the bin on the checkout's own Node with its arguments and exit code", async () => {
    const old = oldNode();
    const dir = packageCopy(old.engines);
    // The checkout's Node (the devDependency `node`), standing in: it reports how it was called.
    mkdirSync(join(dir, "node_modules/node/bin"), { recursive: true });
    const fake = join(dir, "node_modules/node/bin/node");
    writeFileSync(
      fake,
      '#!/bin/sh\necho "checkout node: $* rerun=$EDGE_ROUTER_RERUN_NODE"\nexit 7\n',
    );
    chmodSync(fake, 0o755);
    const bin = join(dir, "bin/edgectl.js");
    const r = await runBin(old.node, bin, ["status", "--no-pusher"]);
    expect(r.stdout).toBe(`checkout node: ${bin} status --no-pusher rerun=${fake}\n`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(7);
  });

  it("a checkout whose own Node is too old as well gets the message, not a loop", async () => {
    const old = oldNode();
    const dir = packageCopy(old.engines);
    mkdirSync(join(dir, "node_modules/node/bin"), { recursive: true });
    // The checkout's Node runs the bin on the same old Node, as a broken install would.
    const fake = join(dir, "node_modules/node/bin/node");
    writeFileSync(fake, `#!/bin/sh\nexec ${old.node} "$@"\n`);
    chmodSync(fake, 0o755);
    const r = await runBin(old.node, join(dir, "bin/edgectl.js"), ["--version"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `edgectl: needs Node.js ${/(\d+\.\d+)/.exec(old.engines)?.[1]} or newer (this is ${old.version} at ${old.node})\n`,
    );
  });

  it("the checkout's ./bin/edgectl.js answers several calls at once on the machine's Node", async () => {
    const node = oldNode().node;
    const version = (
      JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
    ).version;
    const runs = await Promise.all(
      [1, 2, 3, 4].map(() => runBin(node, join(ROOT, "bin/edgectl.js"), ["--version"])),
    );
    expect(runs).toEqual(runs.map(() => ({ code: 0, stdout: `${version}\n`, stderr: "" })));
  });

  it("on a supported Node runs the bundle", async () => {
    const dir = packageCopy(`>=${FLOOR?.[0]}`);
    const r = await runBin(process.execPath, join(dir, "bin/edgectl.js"), ["--version"]);
    expect(r).toEqual({ code: 0, stdout: "bundle ran\n", stderr: "" });
  });
});
