import type { CanonicalResult, Usage } from '../providers/types.ts';

/** The token figures a client is shown for a result: embeddings have no completion tokens. */
export type UsageFigures = Record<string, number>;

/** The provider-reported usage of a result, when it has one (speech results have none). */
export const reportedUsage = (result: CanonicalResult): Usage | undefined =>
  'usage' in result ? result.usage : undefined;

/** `usage` as the API shows it for a result (`meta.usage`, the request log). */
export function usageFigures(result: CanonicalResult): UsageFigures {
  if (result.kind === 'embedding')
    return { prompt_tokens: result.usage.prompt_tokens, total_tokens: result.usage.total_tokens };
  if ('usage' in result && result.usage) {
    const u = result.usage;
    return {
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      total_tokens: u.total_tokens,
    };
  }
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}
