import { SERVER_INFO } from './types.ts';

/** Results whose 2026-07-28 shape carries `ttlMs` and `cacheScope`. */
const CACHEABLE = new Set([
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'server/discover',
]);
/** Results that may be `input_required` (relayed from the upstream as they are). */
const EXTENDED = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * A result as the 2026-07-28 revision requires it: `resultType` (an upstream's `input_required` on
 * the methods that allow it passes through), cache fields on cacheable results, and the server's
 * identity in `_meta`. Lists depend on the caller's key (its grants), so they are never shared:
 * `cacheScope: private`, and no freshness is promised (`ttlMs: 0`) since any upstream may change.
 */
export function modernResult(method: string, result: Record<string, unknown>): Record<string, unknown> {
  const provided = result.resultType;
  const resultType =
    provided !== undefined && provided !== 'complete' && EXTENDED.has(method) ? provided : 'complete';
  const out: Record<string, unknown> = { ...result, resultType };
  if (resultType === 'complete' && CACHEABLE.has(method)) {
    out.ttlMs = 0;
    out.cacheScope = 'private';
  }
  const meta = result._meta;
  if (meta === undefined || (typeof meta === 'object' && meta !== null && !Array.isArray(meta)))
    out._meta = {
      'io.modelcontextprotocol/serverInfo': SERVER_INFO,
      ...(meta as Record<string, unknown> | undefined),
    };
  return out;
}
