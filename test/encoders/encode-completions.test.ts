/** OpenAI's legacy text_completion for a completion result. */
import { describe, expect, it } from 'vitest';
import { textCompletion } from '#gateway/encoders/encode-completions';

describe('textCompletion', () => {
  it('the text as the one choice, the workflow as model, the id prefixed once', () => {
    const result = {
      kind: 'completion' as const,
      id: 'x9',
      text: ' upon a time',
      finish_reason: 'length',
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, cache_read_tokens: 2 },
      model: 'gpt-3.5-turbo-instruct',
    };
    expect(textCompletion(result, 'stories', 1_764_000_000)).toEqual({
      id: 'cmpl-x9',
      object: 'text_completion',
      created: 1_764_000_000,
      model: 'stories',
      system_fingerprint: 'switchyard-compat-v1',
      choices: [{ text: ' upon a time', index: 0, logprobs: null, finish_reason: 'length' }],
      usage: {
        prompt_tokens: 3,
        completion_tokens: 4,
        total_tokens: 7,
        prompt_tokens_details: { cached_tokens: 2 },
      },
    });
    expect(textCompletion({ ...result, id: 'cmpl-y' }, 'stories', 1).id).toBe('cmpl-y');
  });
});
