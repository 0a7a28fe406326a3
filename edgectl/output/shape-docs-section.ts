import { renderShapeDocs } from "./shape-docs.js";
import { CLI_SHAPES } from "./shapes/index.js";

/** The markers around the generated shapes in docs/reference.md. */
export const SHAPE_MARKERS = {
  begin:
    "<!-- cli-json:begin (npm run docs:cli-json writes this part from edgectl/output/shapes) -->",
  end: "<!-- cli-json:end -->",
} as const;

/** `markdown` with the text between the markers replaced by the current shapes. */
export function replaceShapeSection(markdown: string): string {
  const start = markdown.indexOf(SHAPE_MARKERS.begin);
  const end = markdown.indexOf(SHAPE_MARKERS.end);
  if (start < 0 || end < start) throw new Error("docs/reference.md lacks the cli-json markers");
  return `${markdown.slice(0, start + SHAPE_MARKERS.begin.length)}\n\n${renderShapeDocs(CLI_SHAPES)}\n${markdown.slice(end)}`;
}
