import { describe, expect, it } from "vitest";
import {
  IP_LITERAL_PROBLEM,
  originTemplateProblem,
  routingPrefixProblem,
} from "../../../core/index.js";

describe("originTemplateProblem", () => {
  it.each([
    ["https://{pool}.origin.example.com", null],
    ["http://127.0.0.1:9103", null],
    ["http://198.51.100.4:8080", IP_LITERAL_PROBLEM],
    ["{pool}.origin.example.com", "not an absolute URL"],
    ["https://{pool}.example.com/x", "must not have a path, query or fragment"],
    ["ftp://{pool}.example.com", "scheme must be https: or http:"],
    [`https://${"a".repeat(250)}{pool}.example`, "host name over 253 characters"],
    [
      "https://{pool}.vid\u00e9o.example",
      "must be printable ASCII (write an international host name in its xn-- form)",
    ],
    ["https://{pool}.xn--vido-bpa.example", null],
  ])("%s → %s", (template, problem) => {
    expect(originTemplateProblem(template)).toBe(problem);
  });
});

describe("routingPrefixProblem", () => {
  it.each([
    ["/edge/routing/v1/", null],
    ["/x/", null],
    ["/", '"/" must start and end with "/"'],
    ["edge/", '"edge/" must start and end with "/"'],
    ["/edge", '"/edge" must start and end with "/"'],
    ["\u001b[2J", '"\\u001b[2J" must start and end with "/"'],
  ])("%s → %s", (prefix, problem) => {
    expect(routingPrefixProblem(prefix)).toBe(problem);
  });
});
