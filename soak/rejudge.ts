/**
 * `npx tsx soak/rejudge.ts soak/out/results.json`: the no-growth verdicts of a recorded run,
 * judged again by the current rules (the samples are all in results.json).
 */
import { readFileSync } from "node:fs";
import { growthFailure } from "./growth-failure.js";
import { SETTLING_SECONDS } from "./layout.js";
import { GROWTH_GOALS, judgeGrowth, windowOptions } from "./no-growth.js";
import type { Sample } from "./samples.js";

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: npx tsx soak/rejudge.ts RESULTS.json\n");
  process.exit(2);
}
const run = JSON.parse(readFileSync(file, "utf8")) as {
  options: { minutes: number };
  samples: Sample[];
};
const verdicts = judgeGrowth(
  run.samples,
  GROWTH_GOALS,
  windowOptions(run.options.minutes * 60, SETTLING_SECONDS),
);
for (const v of verdicts)
  process.stdout.write(
    `${v.status.padEnd(5)} ${v.figure.padEnd(13)} ${v.series.padEnd(34)} ${v.detail}\n`,
  );
for (const v of verdicts.filter((x) => x.status === "fail"))
  process.stdout.write(`FAIL ${growthFailure(v, run.samples, run.options.minutes * 30)}\n`);
const count = (status: string) => verdicts.filter((v) => v.status === status).length;
const failed = count("fail");
process.stdout.write(
  `${count("pass")} passed, ${failed} failed (${count("short")} too short to judge)\n`,
);
process.exit(failed === 0 ? 0 : 1);
