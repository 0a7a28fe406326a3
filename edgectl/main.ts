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
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  isTTY: process.stdin.isTTY === true,
  cwd: process.cwd(),
  signal: controller.signal,
});
process.exitCode = code;
// etcd3/grpc and Miniflare may keep handles open; the command has finished.
setImmediate(() => process.exit(code));
