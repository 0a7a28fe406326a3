#!/usr/bin/env node
// Runs the TypeScript entry point through tsx, so `npx edge-pusher` works on a fresh clone.
import { register } from "tsx/esm/api";

register();
await import("../pusher/main.ts");
