/** A Cloudflare account or namespace id: 32 hexadecimal characters (the API caps both at 32). */
const CLOUDFLARE_ID = /^[0-9a-f]{32}$/i;

/**
 * Ids the committed templates carry, which must never reach Cloudflare: `deploy/pusher.env.example`'s
 * and `wrangler.toml`'s `REPLACE_WITH_…` values, and the top-level local namespace id of
 * `wrangler.toml` (all zeros, 32 hex, so the shape alone would pass it).
 */
const PLACEHOLDER = /^replace[-_]with[-_]|^0{32}$/i;

/**
 * Why `value` cannot be a real Cloudflare account or namespace id, or `null`: a known placeholder
 * (`placeholder: true`, so the caller can name the file to edit) or the wrong shape.
 */
export function cloudflareIdProblem(
  value: string,
): { readonly placeholder: boolean; readonly message: string } | null {
  if (PLACEHOLDER.test(value)) {
    return { placeholder: true, message: `"${value}" is a template's placeholder, not an id` };
  }
  if (!CLOUDFLARE_ID.test(value)) {
    return { placeholder: false, message: `"${value}" is not an id (32 hexadecimal characters)` };
  }
  return null;
}
