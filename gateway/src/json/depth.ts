/**
 * JSON nesting depth, measured on the text before it is parsed. V8's JSON.parse does not recurse,
 * but nearly everything that handles the parsed value does (JSON.stringify, zod, Ajv, YAML, our
 * own walkers), and a few thousand levels overflow the stack there, far from the request. Bounding
 * the depth where text becomes a value keeps every later walk shallow.
 */

/** Nesting a request body may have (objects and arrays count one level each). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** Nesting a provider's answer may have: far above any real answer, far below the stack's limit. */
export const UPSTREAM_MAX_JSON_DEPTH = 256;

/**
 * The deepest nesting of a JSON text, or `limit + 1` as soon as it is exceeded (the scan stops
 * there). Brackets inside strings do not count. The text need not be valid JSON: invalid text is
 * JSON.parse's to refuse. A plain character loop, with string contents skipped by indexOf: about
 * 3× faster than a global regex over the structural characters, which allocates a match per hit.
 */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i = stringEnd(text, i + 1) - 1;
    } else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (depth > 0 && (c === 93 || c === 125)) depth--; // ] or }
  }
  return deepest;
}

/** Index just past the quote that closes the string whose content starts at `from`. */
function stringEnd(text: string, from: number): number {
  let i = from;
  for (;;) {
    const q = text.indexOf('"', i);
    if (q === -1) return text.length;
    let slashes = 0;
    for (let j = q - 1; j >= from && text.charCodeAt(j) === 92 /* \ */; j--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

export const jsonTooDeep = (text: string, limit: number): boolean => jsonDepth(text, limit) > limit;
