/** The one parameter-refusal rule, as each surface's rules use it. */
import { describe, expect, it } from 'vitest';
import { rejectUnsupported } from '#gateway/requests/compat-chat';
import { rejectUnsupportedCompletion } from '#gateway/requests/compat-completion';
import { paramRules, refusedWhenSet, refuseParams, unsupported } from '#gateway/requests/param-rules';
import { refusal } from './refusal.ts';

const SHAPE = { model: 1, n: 1, logprobs: 1, modalities: 1, stream_options: 1, include: 1, background: 1 };
const RULES = paramRules(
  SHAPE,
  { logprobs: [], modalities: [[]], background: ['auto'] },
  {
    single: ['n'],
    fields: { stream_options: { known: ['include_usage'] } },
    values: { include: ['reasoning.encrypted_content', 'file_search_call.results'] },
  },
);
const check = (body: unknown) => refuseParams(body, RULES);

describe('refuseParams', () => {
  it('takes a body that asks for nothing it cannot honour', () => {
    expect(() =>
      check({
        model: 'w',
        n: 1,
        logprobs: false,
        modalities: [],
        background: 'auto',
        stream_options: { include_usage: true, other: null },
        include: ['reasoning.encrypted_content'],
      }),
    ).not.toThrow();
  });

  it('leaves a body that is not an object to the schema', () => {
    for (const body of [undefined, null, 'text', 42, [{ logprobs: true }]])
      expect(() => check(body)).not.toThrow();
  });

  it('absent, null and false ask for nothing; so do the listed values', () => {
    for (const logprobs of [undefined, null, false]) expect(() => check({ logprobs })).not.toThrow();
    expect(refusal(() => check({ logprobs: true }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "logprobs" is not supported by this gateway.',
      param: 'logprobs',
    });
    expect(refusal(() => check({ background: 'on' })).param).toBe('background');
    expect(refusal(() => check({ modalities: ['audio'] })).param).toBe('modalities');
  });

  it('an empty list asks for nothing only where [] is listed', () => {
    const lists = paramRules({ tools: 1, mcp: 1 }, { ...refusedWhenSet(['mcp']), tools: [] });
    expect(() => refuseParams({ mcp: [] }, lists)).not.toThrow();
    expect(refusal(() => refuseParams({ mcp: [{ url: 'https://mcp.example' }] }, lists)).param).toBe('mcp');
    expect(refusal(() => refuseParams({ tools: [] }, lists)).param).toBe('tools');
  });

  it('a count above 1 is refused', () => {
    expect(refusal(() => check({ n: 2 }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'n must be 1: one choice per request is supported.',
      param: 'n',
    });
  });

  it('a parameter the schema does not know is refused unless null', () => {
    expect(() => check({ model: 'w', suffix: null })).not.toThrow();
    expect(refusal(() => check({ model: 'w', suffix: 'x' }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "suffix" is not known to this gateway.',
      param: 'suffix',
    });
  });

  it('a checked object refuses fields it does not read, in its own words when it has them', () => {
    expect(refusal(() => check({ stream_options: { include_obfuscation: true } }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "stream_options.include_obfuscation" is not supported by this gateway.',
      param: 'stream_options.include_obfuscation',
    });
    const said = paramRules(
      { metadata: 1 },
      {},
      { fields: { metadata: { known: ['user_id'], says: 'metadata takes user_id' } } },
    );
    expect(refusal(() => refuseParams({ metadata: { user_id: 'u', team: 't' } }, said)).message).toBe(
      'The parameter "metadata.team" is not supported: metadata takes user_id.',
    );
  });

  it('a checked list refuses values it does not take', () => {
    expect(
      refusal(() => check({ include: ['reasoning.encrypted_content', 'message.output_text.logprobs'] })),
    ).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message:
        'include "message.output_text.logprobs" is not supported: only reasoning.encrypted_content, file_search_call.results are.',
      param: 'include',
    });
    const one = paramRules({ include: 1 }, {}, { values: { include: ['reasoning.encrypted_content'] } });
    expect(refusal(() => refuseParams({ include: [7] }, one)).message).toBe(
      'include "7" is not supported: only reasoning.encrypted_content is.',
    );
  });

  it('refuses in one order: refused, counts, unknown, object fields, list values', () => {
    const all = { include: ['x'], stream_options: { x: 1 }, extra: 1, n: 3, logprobs: true };
    expect(refusal(() => check(all)).param).toBe('logprobs');
    expect(refusal(() => check({ ...all, logprobs: undefined })).param).toBe('n');
    expect(refusal(() => check({ ...all, logprobs: undefined, n: 1 })).param).toBe('extra');
    expect(refusal(() => check({ include: ['x'], stream_options: { x: 1 } })).param).toBe('stream_options.x');
    expect(refusal(() => check({ include: ['x'] })).param).toBe('include');
  });

  it('unsupported() carries a hint when given one', () => {
    const e = unsupported('prompt', 'prompt must be text.', 'Send a string.');
    expect([e.code, e.status, e.message, e.param, e.hint]).toEqual([
      'unsupported_parameter',
      400,
      'prompt must be text.',
      'prompt',
      'Send a string.',
    ]);
    expect(unsupported('x', 'm').hint).toBeUndefined();
  });
});

describe('the compatible endpoints use it', () => {
  it('chat completions: refused, n, unknown and stream_options', () => {
    expect(() =>
      rejectUnsupported({ model: 'w', messages: [], n: 1, stream_options: { include_usage: true } }),
    ).not.toThrow();
    expect(refusal(() => rejectUnsupported({ model: 'w', functions: [{ name: 'f' }] })).param).toBe(
      'functions',
    );
    expect(refusal(() => rejectUnsupported({ model: 'w', n: 2 })).param).toBe('n');
    expect(refusal(() => rejectUnsupported({ model: 'w', temprature: 1 })).message).toBe(
      'The parameter "temprature" is not known to this gateway.',
    );
    expect(
      refusal(() => rejectUnsupported({ model: 'w', stream_options: { continuous_usage_stats: true } }))
        .param,
    ).toBe('stream_options.continuous_usage_stats');
  });

  it('completions: a prompt other than one text first, with its hint', () => {
    expect(refusal(() => rejectUnsupportedCompletion({ model: 'w', prompt: [1, 2], echo: true }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'prompt must be text: token-id prompts are not supported by this gateway.',
      param: 'prompt',
    });
    expect(refusal(() => rejectUnsupportedCompletion({ model: 'w', prompt: ['a', 'b'] })).message).toBe(
      'prompt must be one string: 2 prompts in one request are not supported by this gateway.',
    );
    expect(refusal(() => rejectUnsupportedCompletion({ model: 'w', prompt: 'a', best_of: 3 })).param).toBe(
      'best_of',
    );
  });
});
