import { describe, expect, it } from "vitest";
import { createLogger } from "../../adapters/logger.js";
import { createPusherLogger } from "../../pusher/pusher-logger.js";
import { parseLogLines } from "../helpers/log-schema.js";

function capture() {
  let text = "";
  return { destination: { write: (s: string) => (text += s) }, text: () => text };
}

describe("the shared logger (adapters/logger.ts)", () => {
  it("writes the base fields, snake_case fields and errors under err", () => {
    const out = capture();
    const log = createLogger({ service: "edgectl", instance: "host-1", ...out });
    log.info({ persistDir: "/x", retry_in_ms: 5 }, "one");
    log.warn({ error: "KvError: 500" }, "two");
    log.error({ err: new TypeError("bad") }, "three");
    const [one, two, three] = parseLogLines(out.text());
    expect(one).toMatchObject({ service: "edgectl", instance: "host-1", persist_dir: "/x" });
    expect(one?.retry_in_ms).toBe(5);
    expect(two?.err).toBe("KvError: 500");
    expect(three?.err).toMatchObject({ type: "TypeError", message: "bad" });
    expect(three?.level).toBe(50);
  });

  it("redacts secrets whatever their field is called", () => {
    const out = capture();
    const log = createLogger({ service: "edge-pusher", ...out });
    log.info(
      {
        token: "s3cret-a",
        apiToken: "s3cret-b",
        CF_API_TOKEN: "s3cret-c",
        ETCD_PASSWORD: "s3cret-d",
        etcd: { password: "s3cret-e", authorization: "Bearer s3cret-f" },
      },
      "secrets",
    );
    const text = out.text();
    expect(text).not.toMatch(/s3cret/);
    expect(text.match(/\[redacted\]/g)).toHaveLength(6);
  });

  it("gives the pusher's logger service edge-pusher and PUSHER_ID as instance", () => {
    const out = capture();
    createPusherLogger({ instance: "pusher-7", ...out }).info("up");
    expect(parseLogLines(out.text())[0]).toMatchObject({
      service: "edge-pusher",
      instance: "pusher-7",
    });
  });
});
