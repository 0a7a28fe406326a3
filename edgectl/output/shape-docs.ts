import { z } from "zod";
import type { DocumentedShape } from "./shapes/index.js";

/** The part of JSON Schema that `z.toJSONSchema` emits for edgectl's shapes. */
interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly items?: JsonSchema;
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly additionalProperties?: JsonSchema | boolean;
  readonly description?: string;
  readonly $ref?: string;
  readonly $defs?: Readonly<Record<string, JsonSchema>>;
}

const pad = (depth: number) => "  ".repeat(depth);

/** A schema as a TypeScript-like type; objects span lines at `depth`. */
function typeText(s: JsonSchema, depth: number): string {
  if (s.$ref) return s.$ref.slice(s.$ref.lastIndexOf("/") + 1);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives) return alternatives.map((a) => typeText(a, depth)).join(" | ");
  if (s.type !== undefined && typeof s.type !== "string")
    return s.type.map((t) => typeText({ ...s, type: t }, depth)).join(" | ");
  switch (s.type) {
    case "object": {
      if (!s.properties) {
        const value =
          typeof s.additionalProperties === "object"
            ? typeText(s.additionalProperties, depth)
            : "unknown";
        return `{ [key: string]: ${value} }`;
      }
      const required = new Set(s.required ?? []);
      const lines = Object.entries(s.properties).map(([name, p]) => {
        const comment = p.description ? ` // ${p.description}` : "";
        return `${pad(depth + 1)}${name}${required.has(name) ? "" : "?"}: ${typeText(p, depth + 1)};${comment}`;
      });
      return `{\n${lines.join("\n")}\n${pad(depth)}}`;
    }
    case "array":
      return `Array<${s.items ? typeText(s.items, depth) : "unknown"}>`;
    case "integer":
      return "integer";
    default:
      return typeof s.type === "string" ? s.type : "unknown";
  }
}

/**
 * docs/reference.md's list of `-o json` shapes, written from the zod schemas themselves (through
 * `z.toJSONSchema`), so the docs cannot drift from what edgectl emits. A schema with an `id`
 * (`.meta({ id })`, the shapes several commands share) is written once, first, and named where
 * it is used.
 */
export function renderShapeDocs(shapes: readonly DocumentedShape[]): string {
  const shared = new Map<string, JsonSchema>();
  const parts = shapes.map(({ invocation, schema }) => {
    const js = z.toJSONSchema(schema, { io: "output" }) as JsonSchema;
    for (const [name, def] of Object.entries(js.$defs ?? {})) shared.set(name, def);
    return [
      `**\`${invocation}\`**${js.description ? `: ${js.description}` : ""}`,
      "",
      "```ts",
      typeText(js, 0),
      "```",
    ].join("\n");
  });
  const names = [...shared.keys()].sort();
  const defs = names.map((name) => {
    const { description, ...def } = shared.get(name) as JsonSchema;
    return `type ${name} = ${typeText(def, 0)};${description ? ` // ${description}` : ""}`;
  });
  const preamble = ["Shapes several commands share:", "", "```ts", defs.join("\n"), "```"].join(
    "\n",
  );
  return `${[preamble, ...parts].join("\n\n")}\n`;
}
