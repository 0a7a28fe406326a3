import { describe, expect, it } from "vitest";
import { originTemplateProblem, routingPrefixProblem } from "../../core/index.js";

describe("originTemplateProblem", () => {
  it.each([
    ["https://{pool}.origin.example.com", null],
    ["http://127.0.0.1:9103", null],
    ["{pool}.origin.example.com", 'not an absolute URL: "probe-1.origin.example.com"'],
    ["https://{pool}.example.com/x", "must not have a path, query or fragment"],
    ["ftp://{pool}.example.com", 'scheme must be https: or http:, got "ftp:"'],
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
  ])("%s → %s", (prefix, problem) => {
    expect(routingPrefixProblem(prefix)).toBe(problem);
  });
});
