/**
 * `npm start`: runs the local stack (scripts/stack/main.ts) in a child process and forwards
 * SIGINT/SIGTERM/SIGHUP to it. The extra process lets the stack outlive its launcher: when this
 * one is SIGKILLed (a wrapper that does not wait, a `tsx` command that gets no answer within
 * 30 ms), the stack notices its parent is gone and still stops everything it started. See
 * scripts/stack/main.ts for the EDGE_STACK_* overrides.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("./stack/main.ts", import.meta.url));
const child = spawn(process.execPath, ["--import", "tsx", main], {
  stdio: ["ignore", "inherit", "inherit"],
  env: process.env,
});

for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    child.kill(sig);
  });
}
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
