// Shared by the two bins: plain JavaScript, so an installed package needs no TypeScript loader.
// It imports only what every Node that can run an ES module has, so that an older Node gets one
// line saying which Node is needed instead of a link error (node:module's enableCompileCache).
// node:fs through getBuiltinModule: its ES module facade reads every export, which loads fs
// streams and fs/promises (~8 ms of each start) that no bin needs here.
const { existsSync, readFileSync } =
  typeof process.getBuiltinModule === "function"
    ? process.getBuiltinModule("node:fs")
    : await import("node:fs");

const ROOT = new URL("../", import.meta.url);
/** Set in a bin re-run on the checkout's Node: the path of that Node. */
const RERUN_MARKER = "EDGE_ROUTER_RERUN_NODE";

/** `[major, minor]` of the lowest Node that package.json's `engines.node` (`>=22.12`) accepts. */
function requiredNode() {
  const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8"));
  const m = /(\d+)\.(\d+)/.exec(String(pkg.engines?.node ?? ""));
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** Whether `version` (`"20.20.2"`) is at least `[major, minor]`. */
function atLeast(version, [major, minor]) {
  const [a, b] = version.split(".").map(Number);
  return a > major || (a === major && b >= minor);
}

/** The checkout's own Node (the devDependency `node`), when there is one. */
function projectNode() {
  for (const path of ["node_modules/node/bin/node", "node_modules/.bin/node"]) {
    const file = new URL(path, ROOT).pathname;
    if (existsSync(file)) return file;
  }
  return null;
}

/**
 * Runs this bin again on `node`, passing SIGTERM and SIGHUP on, and exits as it does. The re-executed bin
 * is on a supported Node, so it never re-executes again.
 */
async function rerunOn(node) {
  // Imported here: loading child_process (net, streams) costs every start of a supported Node ~6 ms.
  const { spawn } = await import("node:child_process");
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, [RERUN_MARKER]: node },
  });
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  // Ctrl-C reaches the child from the terminal already (same process group); a second SIGINT
  // would cut its clean stop short. This process waits for it.
  process.on("SIGINT", () => {});
  child.on("error", (err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}

/**
 * Checks the running Node against `engines`. Too old: re-runs the bin on the checkout's own
 * Node when there is one (so `./bin/edgectl.js` works whatever `node` is on the PATH), else
 * prints one line naming the Node it needs and exits 1. Returns whether the caller may go on.
 * @param {string} name the bin's name, for the message
 */
export function supportedNode(name) {
  const need = requiredNode();
  if (atLeast(process.versions.node, need)) return true;
  const node = projectNode();
  // Once only: a checkout's Node that is itself too old gets the message below, not a loop.
  if (node && node !== process.execPath && process.env[RERUN_MARKER] === undefined) {
    void rerunOn(node);
    return false;
  }
  process.stderr.write(
    `${name}: needs Node.js ${need.join(".")} or newer (this is ${process.versions.node} at ${process.execPath})\n`,
  );
  process.exit(1);
}

/**
 * Whether a bin turns source maps on: only `edgectl --debug`, the one run that prints stacks.
 * Node decodes a bundle file's whole map the first time a stack through it is formatted, and keeps
 * it: in the pusher, the first failed etcd call (grpc-js formats every call error's stack) held
 * ~12 MiB more for good (the grpc-js/etcd3 chunk's 114,630 mappings). Without maps, a stack names
 * `dist/` lines, which are not minified; `NODE_OPTIONS=--enable-source-maps` names the TypeScript.
 * @param {string} name the bundle's name, as in package.json `bin`
 * @param {readonly string[]} argv the process's arguments
 */
export function sourceMapsWanted(name, argv) {
  return name === "edgectl" && argv.includes("--debug");
}

/**
 * Imports `dist/<name>.js` (source maps on when {@link sourceMapsWanted}).
 * A checkout that was never built gets one line saying how to build, not a module-not-found trace.
 * @param {string} name the bundle's name, as in package.json `bin`
 */
export async function launch(name) {
  const bundle = new URL(`dist/${name}.js`, ROOT);
  if (!existsSync(bundle)) {
    process.stderr.write(
      `${name}: ${bundle.pathname} is missing; run \`npm run build\` in the edge-router checkout\n`,
    );
    process.exit(1);
  }
  // V8's code cache (in the OS temp directory) cuts the start of the next run by about a fifth;
  // when the directory is not writable Node carries on without it.
  const { enableCompileCache } =
    typeof process.getBuiltinModule === "function"
      ? process.getBuiltinModule("node:module")
      : await import("node:module");
  enableCompileCache();
  // Source maps also cost each start a scan of every loaded module that has one (about 20 ms of
  // `edgectl status`).
  if (sourceMapsWanted(name, process.argv)) process.setSourceMapsEnabled(true);
  await import(bundle.href);
}
