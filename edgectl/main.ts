import { processSink } from "./cli/process-sink.js";
import { run } from "./run.js";

// The only place that touches the process: argv, env, stdio, signals and the exit code.
const controller = new AbortController();
const onSignal = () => {
  controller.abort();
  // Short commands ignore the signal; do not let them linger past a bounded grace period.
  setTimeout(() => process.exit(130), 10_000).unref();
};
process.once("SIGTERM", onSignal);
process.once("SIGINT", onSignal);

const code = await run(process.argv.slice(2), {
  env: process.env,
  stdout: processSink(process.stdout),
  stderr: processSink(process.stderr),
  // Getters: process.stdin opens the descriptor and loads fs streams, which only the commands
  // that read stdin or ask for confirmation need.
  get stdin() {
    return process.stdin;
  },
  get isTTY() {
    return process.stdin.isTTY === true;
  },
  cwd: process.cwd(),
  signal: controller.signal,
});
process.exitCode = code;
// etcd3/grpc and Miniflare may keep handles open; the command has finished.
setImmediate(() => process.exit(code));
