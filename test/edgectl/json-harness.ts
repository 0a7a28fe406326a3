import { expect } from "vitest";
import type { z } from "zod";
import { ErrorShape } from "../../edgectl/output/shapes/error-shape.js";

/** Parses stdout as exactly one JSON document (one line) and checks it against `schema`. */
export function oneDocument<S extends z.ZodType>(stdout: string, schema: S): z.output<S> {
  const lines = stdout.split("\n").filter((l) => l !== "");
  expect(lines, stdout).toHaveLength(1);
  return schema.parse(JSON.parse(lines[0] ?? "")) as z.output<S>;
}

/** Parses stdout as the one error document and returns its `error`. */
export function errorDocument(stdout: string) {
  return oneDocument(stdout, ErrorShape).error;
}
