/** OpenAI's chat.completion and the native `data` shapes for each canonical result. */
import { describe, expect, it } from 'vitest';
import { chatCompletion, compatUsage, nativeData } from '#gateway/encoders/data';
import type { ChatResult, Usage } from '#gateway/providers/types';

const USAGE: Usage = { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 };
const CHAT: ChatResult = {
  kind: 'chat',
  id: 'abc123',
  content: 'Paris.',
  finish_reason: 'stop',
  usage: USAGE,
  model: 'gpt-4o-mini',
};

describe('chatCompletion', () => {
  it('a chat result, the workflow as model, the id prefixed once', () => {
    expect(chatCompletion(CHAT, 'support-bot', 1_764_000_000)).toEqual({
      id: 'chatcmpl-abc123',
      object: 'chat.completion',
      created: 1_764_000_000,
      model: 'support-bot',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Paris.', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
      system_fingerprint: 'switchyard-compat-v1',
    });
    expect(chatCompletion({ ...CHAT, id: 'chatcmpl-xyz' }, 'w', 1).id).toBe('chatcmpl-xyz');
  });

  it('tool calls go in the message; an empty list is left out', () => {
    const calls = [{ id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } }];
    const withCalls = chatCompletion(
      { ...CHAT, content: null, tool_calls: calls, finish_reason: 'tool_calls' },
      'w',
      1,
    );
    expect(withCalls.choices[0]?.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: calls,
      refusal: null,
    });
    expect(chatCompletion({ ...CHAT, tool_calls: [] }, 'w', 1).choices[0]?.message).toEqual({
      role: 'assistant',
      content: 'Paris.',
      refusal: null,
    });
  });

  it('a completion result as a chat completion (its text as the message)', () => {
    const c = chatCompletion(
      {
        kind: 'completion',
        id: 'cmpl-1',
        text: 'Once upon a time',
        finish_reason: 'length',
        usage: USAGE,
        model: 'm',
      },
      'w',
      1,
    );
    expect([c.id, c.choices[0]?.message.content, c.choices[0]?.finish_reason]).toEqual([
      'chatcmpl-cmpl-1',
      'Once upon a time',
      'length',
    ]);
  });
});

describe('compatUsage', () => {
  it('prompt-cache reads as cached_tokens; writes stay in prompt_tokens', () => {
    expect(compatUsage(USAGE)).toBe(USAGE);
    expect(compatUsage({ ...USAGE, cache_read_tokens: 8, cache_write_tokens: 2 })).toEqual({
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 8 },
    });
    expect(compatUsage({ ...USAGE, cache_write_tokens: 2 })).toEqual({
      prompt_tokens: 12,
      completion_tokens: 5,
      total_tokens: 17,
    });
  });
});

describe('nativeData', () => {
  it('a structured value wins over the result', () => {
    expect(nativeData(CHAT, 'w', 1, { city: 'Paris' })).toEqual({ city: 'Paris' });
  });

  it('embeddings, images, transcriptions and speech in their list shapes', () => {
    expect(
      nativeData(
        {
          kind: 'embedding',
          embeddings: [[0.1, 0.2], 'AAAA'],
          usage: USAGE,
          model: 'text-embedding-3-small',
        },
        'w',
        1,
        undefined,
      ),
    ).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', embedding: [0.1, 0.2], index: 0 },
        { object: 'embedding', embedding: 'AAAA', index: 1 },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 12, total_tokens: 17 },
    });
    expect(
      nativeData(
        {
          kind: 'image',
          created: 1_764_000_000,
          images: [{ url: 'https://img.example/1.png', revised_prompt: 'a cat' }, { b64_json: 'iVBO' }],
        },
        'w',
        1,
        undefined,
      ),
    ).toEqual({
      created: 1_764_000_000,
      data: [
        { url: 'https://img.example/1.png', revised_prompt: 'a cat' },
        { b64_json: 'iVBO', revised_prompt: null },
      ],
    });
    expect(
      nativeData({ kind: 'transcription', text: 'hello there', durationSeconds: 1.5 }, 'w', 1, undefined),
    ).toEqual({
      text: 'hello there',
    });
    expect(
      nativeData(
        { kind: 'speech', audio: new Uint8Array([1, 2, 3]), format: 'mp3', contentType: 'audio/mpeg' },
        'w',
        1,
        undefined,
      ),
    ).toEqual({ audio: 'AQID', format: 'mp3' });
  });
});
