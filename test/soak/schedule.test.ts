import { describe, expect, it } from "vitest";
import { chaosSchedule, ETCD_DOWN_SECONDS } from "../../soak/schedule.js";

describe("chaos schedule", () => {
  it("quick run: a heartbeat a minute, the leader pusher and an etcd member once, in the first half", () => {
    const steps = chaosSchedule(300, false);
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
    expect(steps.some((s) => s.kind === "plant-lease")).toBe(false);
  });

  it("30-minute run: the leader pusher every 5 minutes, etcd once; steps never on a sampling second", () => {
    const steps = chaosSchedule(1800, true);
    expect(steps.filter((s) => s.kind === "kill-leader-pusher").map((s) => s.t)).toEqual([
      333, 633, 933, 1233, 1533,
    ]);
    expect(steps.filter((s) => s.kind === "kill-etcd-member")).toHaveLength(1);
    expect(steps.filter((s) => s.kind === "plant-lease")).toHaveLength(30);
    for (const s of steps) expect(s.t % 10).not.toBe(0);
    const times = steps.map((s) => s.t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});
