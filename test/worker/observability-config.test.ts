import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";

describe("wrangler.toml [env.production.observability]", () => {
  it("keeps query strings (signed segment URLs) out of Workers Logs and traces", () => {
    const toml = parse(readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8")) as {
      env: { production: { observability?: Record<string, unknown> } };
    };
    const o = toml.env.production.observability ?? {};
    expect(o.enabled).toBe(true);
    expect(o.redact_query_string).toBe(true);
  });
});
