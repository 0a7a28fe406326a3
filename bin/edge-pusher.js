#!/usr/bin/env node
// Runs the bundle `npm run build` writes to dist/ (a source checkout builds it on `npm ci`,
// `npm start` and `npm test`; after editing pusher/, edgectl/, adapters/ or core/, rebuild).
import { launch, supportedNode } from "./launch.js";

if (supportedNode("edge-pusher")) {
  // Once, before anything is loaded: the memory settings of bin/service-tuning.js.
  const { PUSHER_TUNED, tuneServiceProcess } = await import("./service-tuning.js");
  tuneServiceProcess(PUSHER_TUNED);
  await launch("edge-pusher");
}
