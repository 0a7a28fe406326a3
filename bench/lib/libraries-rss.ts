import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { floorBundle } from "./floor-bundle.js";
import { benchPusherEnvironment } from "./pusher-process.js";
import { round } from "./stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The pusher's run-time packages, bundled as dist/ bundles them, each evaluated; then the built
 * Cloudflare sink's chunk (the SDK's client, bundled there), whose path is in SINK_CHUNK.
 */
const LIBRARIES = `
import * as etcd3 from "etcd3";
import * as promClient from "prom-client";
import * as zod from "zod";
import * as pino from "pino";
import * as cockatiel from "cockatiel";
(globalThis as { kept?: unknown }).kept = [etcd3, promClient, zod, pino, cockatiel];
const sink = process.env.SINK_CHUNK;
if (sink) await import(sink);
// The pusher's RSS is read 1.5 s after it settles; so is this one's.
await new Promise((r) => setTimeout(r, 1500));
process.stdout.write(String(process.memoryUsage().rss));
`;

/**
 * RSS in MiB of a Node process that loads the pusher's run-time packages (see the result), with
 * the pusher's variables from the unit (`deployed`).
 */
export async function librariesRssMb(
  deployed: Readonly<Record<string, string>>,
): Promise<number | null> {
  const chunks = `${ROOT}dist/chunks/`;
  const sink = readdirSync(chunks).find((f) => /^cloudflare-sink-[^.]+\.js$/.test(f));
  const bundle = await floorBundle("libraries", { source: LIBRARIES });
  const env = benchPusherEnvironment(deployed, process.env);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bundle],
      {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? "",
          ...env,
          ...(sink ? { SINK_CHUNK: `${chunks}${sink}` } : {}),
        },
        timeout: 30_000,
      },
      (err, stdout) => resolve(err ? null : round(Number(stdout) / 1048576)),
    );
  });
}
