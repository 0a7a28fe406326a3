import { z } from "zod";
import { CanaryReportShape, PoolHealthShape, ViewerShedShape } from "./common-shapes.js";

/**
 * `edgectl status -o json`: the status document, with exit 0 in sync and 1 behind (behind is a
 * result, not an error); 4 with the error shape when no etcd member answers.
 */
export const StatusShape = z
  .object({
    in_sync: z.boolean(),
    behind: z.array(z.string()).describe("every reason the edge is behind; empty in sync"),
    etcd: z.object({
      revision: z.number().int(),
      epoch: z.number().int(),
      newest_change: z.number().int().describe("newest mod revision of a routing key"),
    }),
    kv: z.object({
      meta: z
        .object({
          rev: z.number(),
          epoch: z.number(),
          heartbeat_at: z.string().nullable(),
          pusher: z.string().nullable(),
        })
        .nullable()
        .describe(
          "KV `meta` (`rev`: the revision `routes` was last confirmed against); null when absent or unreadable",
        ),
      routes: z
        .object({ rev: z.number(), epoch: z.number() })
        .nullable()
        .describe(
          "KV `routes` (`rev`: the revision where routing last changed); null when absent or invalid",
        ),
      error: z.string().nullable().describe("why KV could not be read; null when it could"),
      settling: z
        .object({ written_at: z.string(), settled_by: z.string() })
        .nullable()
        .describe(
          "KV `routes` was written so recently (`written_at`, its `compiled_at`) that some edge locations may serve the previous map until about `settled_by` (KV propagation 60 s or more + `KV_CACHE_TTL` + `ISOLATE_CACHE_SECONDS`, docs/reference.md §4); null once settled",
        ),
    }),
    pusher: z
      .discriminatedUnion("ok", [
        z.object({
          ok: z.literal(true),
          role: z.string(),
          pushed_revision: z.number().nullable(),
          epoch: z.number().nullable(),
        }),
        z.object({ ok: z.literal(false), error: z.string() }),
      ])
      .nullable()
      .describe("the pusher's /status; null with --no-pusher"),
    shedding: z
      .array(PoolHealthShape)
      .describe("pools that shed viewers in the map KV holds (docs/reference.md §9)"),
    viewer_sheds: z
      .array(ViewerShedShape)
      .describe("countries that shed a pool by their own viewers in the map KV holds (§12)"),
    canary: CanaryReportShape.nullable().describe("the running canary (§13); null: none"),
  })
  .describe("status: is the edge on the current config?");

/** The parsed `status` result. */
export type StatusResult = z.output<typeof StatusShape>;
