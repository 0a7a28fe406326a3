import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { round } from "./stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** RSS in MiB of a Node process that imports the pusher's run-time packages (see the result). */
export function librariesRssMb(nodeOptions: string | null): Promise<number | null> {
  const chunks = `${ROOT}dist/chunks/`;
  const sink = readdirSync(chunks).find((f) => /^cloudflare-sink-[^.]+\.js$/.test(f));
  const modules = ["etcd3", "prom-client", "zod", "pino", "cockatiel"];
  if (sink) modules.push(`${chunks}${sink}`);
  // The pusher's RSS is read 1.5 s after it settles; so is this one's.
  const script = `for (const m of ${JSON.stringify(modules)}) await import(m);
await new Promise((r) => setTimeout(r, 1500));
process.stdout.write(String(process.memoryUsage().rss));`;
  const options = process.env.BENCH_PUSHER_NODE_OPTIONS ?? nodeOptions;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", script],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? "", ...(options ? { NODE_OPTIONS: options } : {}) },
        timeout: 30_000,
      },
      (err, stdout) => resolve(err ? null : round(Number(stdout) / 1048576)),
    );
  });
}
