#!/usr/bin/env node
// Runs the TypeScript entry point through tsx, so `npx edgectl` works on a fresh clone.
import { register } from "tsx/esm/api";

register();
await import("../edgectl/main.ts");
