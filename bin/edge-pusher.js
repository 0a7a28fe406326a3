#!/usr/bin/env node
// Runs the bundle `npm run build` writes to dist/ (a source checkout builds it on `npm ci`,
// `npm start` and `npm test`; after editing pusher/, edgectl/, adapters/ or core/, rebuild).
// The memory settings (NODE_OPTIONS, glibc malloc's) are the unit's: deploy/edge-pusher.service.
import { launch, supportedNode } from "./launch.js";

if (supportedNode("edge-pusher")) await launch("edge-pusher");
