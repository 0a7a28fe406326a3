#!/usr/bin/env node
// Runs the bundle `npm run build` writes to dist/ (a source checkout builds it on `npm ci`,
// `npm start` and `npm test`; after editing pusher/, edgectl/, adapters/ or core/, rebuild).
// `edgectl heartbeat`'s memory settings are its unit's: deploy/edge-heartbeat@.service.
import { launch, supportedNode } from "./launch.js";

if (supportedNode("edgectl")) await launch("edgectl");
