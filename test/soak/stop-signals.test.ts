import { afterEach, describe, expect, it } from "vitest";
import { onStopSignal } from "../../soak/stop-signals.js";

const SIGNALS = ["SIGINT", "SIGTERM"] as const;
const before = new Map(SIGNALS.map((s) => [s, process.listeners(s)]));
afterEach(() => {
  for (const s of SIGNALS)
    for (const l of process.listeners(s)) if (!before.get(s)?.includes(l)) process.off(s, l);
});

describe("onStopSignal", () => {
  it("stops on the first SIGINT or SIGTERM only, however many arrive", () => {
    const seen: string[] = [];
    onStopSignal((sig) => seen.push(sig));
    process.emit("SIGTERM");
    process.emit("SIGINT");
    process.emit("SIGTERM");
    expect(seen).toEqual(["SIGTERM"]);
  });
});
