#!/usr/bin/env node
// Runs the bundle `npm run build` writes to dist/ (a source checkout builds it on `npm ci`,
// `npm start` and `npm test`; after editing pusher/, edgectl/, adapters/ or core/, rebuild).
import { launch, supportedNode } from "./launch.js";

if (supportedNode("edgectl")) {
  const { edgectlCommand, HEARTBEAT_TUNED, tuneServiceProcess } = await import(
    "./service-tuning.js"
  );
  // The heartbeat runs for months: the memory settings of bin/service-tuning.js, as the pusher.
  if (edgectlCommand(process.argv.slice(2)) === "heartbeat") tuneServiceProcess(HEARTBEAT_TUNED);
  await launch("edgectl");
}
