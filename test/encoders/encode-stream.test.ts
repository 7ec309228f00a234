/** OpenAI's streaming frames: chat.completion.chunk per canonical event, the usage chunk, a broken stream's error. */
import { describe, expect, it } from 'vitest';
import { chunkFor, usageChunk } from '#gateway/encoders/chunks';
import { streamError } from '#gateway/encoders/encode-stream';
import type { Failure } from '#gateway/pipeline/result';

const CTX = { id: 'chatcmpl-r1', created: 1_764_000_000, model: 'support-bot' };
const HEAD = {
  id: 'chatcmpl-r1',
  object: 'chat.completion.chunk',
  created: 1_764_000_000,
  model: 'support-bot',
  system_fingerprint: 'switchyard-compat-v1',
};
const choice = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  ...HEAD,
  choices: [{ index: 0, delta, logprobs: null, finish_reason }],
});

describe('chunkFor', () => {
  it('the first delta names the role; later ones carry only what they add', () => {
    expect(chunkFor(CTX, { type: 'delta', content: 'Hel' }, true)).toEqual(
      choice({ role: 'assistant', content: 'Hel' }),
    );
    expect(chunkFor(CTX, { type: 'delta', content: 'lo' }, false)).toEqual(choice({ content: 'lo' }));
  });

  it('tool call deltas: id and type with the first, then the arguments', () => {
    expect(
      chunkFor(
        CTX,
        { type: 'delta', tool_calls: [{ index: 0, id: 'call_1', name: 'get_weather', arguments: '' }] },
        false,
      ),
    ).toEqual(
      choice({
        tool_calls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
        ],
      }),
    );
    expect(
      chunkFor(CTX, { type: 'delta', tool_calls: [{ index: 0, arguments: '{"city":"Paris"}' }] }, false),
    ).toEqual(choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }));
  });

  it('the finish reason in its own chunk; a usage event makes none', () => {
    expect(chunkFor(CTX, { type: 'finish', finish_reason: 'tool_calls' }, false)).toEqual(
      choice({}, 'tool_calls'),
    );
    expect(
      chunkFor(
        CTX,
        { type: 'usage', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } },
        false,
      ),
    ).toBeUndefined();
  });

  it('the usage chunk has no choices', () => {
    expect(
      usageChunk(CTX, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, cache_read_tokens: 4 }),
    ).toEqual({
      ...HEAD,
      choices: [],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 5,
        total_tokens: 17,
        prompt_tokens_details: { cached_tokens: 4 },
      },
    });
  });
});

describe('streamError', () => {
  const failure: Failure = {
    slot: undefined,
    attempts: [],
    code: 'upstream_error',
    message: 'connection reset',
    providerMessage: 'connection reset',
    httpStatus: 502,
    upstreamStatus: undefined,
    usage: undefined,
    costMicros: null,
    aborted: false,
  };

  it("a provider's failure is upstream_error; the gateway's own refusal keeps its code and type", () => {
    expect(streamError(failure)).toEqual({
      message: 'The stream failed after it started: connection reset',
      type: 'api_error',
      code: 'upstream_error',
      param: null,
    });
    expect(
      streamError({
        ...failure,
        message: 'The workflow budget is spent.',
        refusal: { code: 'workflow_budget_exceeded', type: 'budget_exceeded' },
      }),
    ).toEqual({
      message: 'The workflow budget is spent.',
      type: 'budget_exceeded',
      code: 'workflow_budget_exceeded',
      param: null,
    });
  });
});
