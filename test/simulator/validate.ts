/** zod validation turned into provider-neutral issues that each provider words its own way. */
import type { z } from 'zod';
import type { ValidationIssue } from './exchange.ts';

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

export function validate(schema: z.ZodType, body: unknown): ValidationIssue[] | undefined {
  const result = schema.safeParse(body);
  if (result.success) return undefined;
  return result.error.issues.map((issue) => {
    const path = issue.path.map((k) => (typeof k === 'number' ? k : String(k)));
    const value = valueAt(body, issue.path);
    // An empty required list reads as "not specified" in the providers' own wording.
    const empty = issue.code === 'too_small' && Array.isArray(value) && value.length === 0;
    return {
      path,
      message: issue.message,
      missing: (issue.code === 'invalid_type' && value === undefined) || empty,
    };
  });
}

/** messages[0].content — OpenAI's `param` style. */
export function bracketPath(path: readonly (string | number)[]): string {
  return path.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('');
}

/** messages.0.content — Anthropic's style. */
export function dottedPath(path: readonly (string | number)[]): string {
  return path.join('.');
}
