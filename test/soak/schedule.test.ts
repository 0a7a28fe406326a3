import { describe, expect, it } from "vitest";
import { OBSERVER_SETTLING_SECONDS } from "../../soak/layout.js";
import { chaosSchedule, ETCD_DOWN_SECONDS } from "../../soak/schedule.js";

describe("chaos schedule", () => {
  it("quick run: a heartbeat a minute, the leader pusher and an etcd member once, in the first half", () => {
    const steps = chaosSchedule(300, null);
    expect(steps.filter((s) => s.kind === "kill-heartbeat").map((s) => s.t)).toEqual([
      63, 123, 183, 243,
    ]);
    const pusher = steps.filter((s) => s.kind === "kill-leader-pusher");
    expect(pusher).toHaveLength(1);
    expect(pusher[0]?.t).toBeLessThan(150);
    const kill = steps.find((s) => s.kind === "kill-etcd-member");
    const back = steps.find((s) => s.kind === "restart-etcd-member");
    expect(kill && back && back.t - kill.t).toBe(ETCD_DOWN_SECONDS);
    expect(back?.t).toBeLessThan(150);
    // the observer once, early enough that its successor is past its warm-up by the judged half
    expect(steps.filter((s) => s.kind === "kill-observer").map((s) => s.t)).toEqual([67]);
    expect(steps.some((s) => s.kind === "plant-lease" || s.kind === "plant-observed")).toBe(false);
  });

  it("--plant-leak observed leaves observed/ keys every 30 s, and plants no lease", () => {
    const steps = chaosSchedule(300, "observed");
    expect(steps.filter((s) => s.kind === "plant-observed").map((s) => s.t)).toEqual([
      17, 47, 77, 107, 137, 167, 197, 227, 257, 287,
    ]);
    expect(steps.some((s) => s.kind === "plant-lease")).toBe(false);
  });

  it("30-minute run: the leader pusher every 5 minutes, etcd once; steps never on a sampling second", () => {
    const steps = chaosSchedule(1800, "lease");
    expect(steps.filter((s) => s.kind === "kill-leader-pusher").map((s) => s.t)).toEqual([
      333, 633, 933, 1233, 1533,
    ]);
    expect(steps.filter((s) => s.kind === "kill-etcd-member")).toHaveLength(1);
    expect(steps.filter((s) => s.kind === "plant-lease")).toHaveLength(30);
    // the observer once: its successor's memory settles 17 minutes on, and is judged for 10
    expect(steps.filter((s) => s.kind === "kill-observer").map((s) => s.t)).toEqual([127]);
    for (const s of steps) expect(s.t % 10).not.toBe(0);
    const times = steps.map((s) => s.t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("the hour: the observer every 5 minutes of the first half, the last leaving 10 settled minutes", () => {
    const kills = chaosSchedule(3600, null)
      .filter((s) => s.kind === "kill-observer")
      .map((s) => s.t);
    expect(kills).toEqual([127, 427, 727, 1027, 1327, 1627]);
    expect(3600 - ((kills.at(-1) ?? 0) + OBSERVER_SETTLING_SECONDS)).toBeGreaterThanOrEqual(600);
    // a 20-minute run cannot leave that much: the observer is still killed once
    expect(
      chaosSchedule(1200, null)
        .filter((s) => s.kind === "kill-observer")
        .map((s) => s.t),
    ).toEqual([127]);
  });
});
