/** The Responses API's response object and its stream of typed events, for canonical results. */
import { describe, expect, it } from 'vitest';
import { answeredResponse, type ResponseEcho, responseObject } from '#gateway/encoders/encode-responses';
import { ResponsesStreamEncoder, type TypedEvent } from '#gateway/encoders/encode-responses-stream';
import type { ChatResult, StreamEvent, Usage } from '#gateway/providers/types';
import { responsesBody } from '#gateway/requests/responses-schema';

const id = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9a-f]{40}$`));
const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, cache_read_tokens: 64 };
const echo = (body: Record<string, unknown>): ResponseEcho => ({
  id: 'resp_7',
  createdAt: 1_764_000_000,
  model: 'support-bot',
  body: responsesBody.parse({ model: 'support-bot', input: 'x', ...body }),
});
const chat = (over: Partial<ChatResult>): ChatResult => ({
  kind: 'chat',
  id: 'chatcmpl-9',
  content: null,
  finish_reason: 'stop',
  usage: USAGE,
  model: 'gpt-4o-mini',
  ...over,
});

/** The response object with the request's defaults, as every test below starts from. */
const DEFAULTS = {
  id: 'resp_7',
  object: 'response',
  created_at: 1_764_000_000,
  background: false,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  max_tool_calls: null,
  model: 'support-bot',
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  service_tier: 'default',
  store: true,
  temperature: 1,
  text: { format: { type: 'text' }, verbosity: 'medium' },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  metadata: {},
};
const USAGE_OUT = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 64, cache_write_tokens: 0 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 150,
};

describe('answeredResponse', () => {
  it('text as one message item, tool calls as function_call items', () => {
    const result = chat({
      content: 'Checking.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
      finish_reason: 'tool_calls',
    });
    expect(answeredResponse(echo({}), result)).toEqual({
      ...DEFAULTS,
      status: 'completed',
      output: [
        {
          id: id('msg'),
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
        },
        {
          id: id('fc'),
          type: 'function_call',
          status: 'completed',
          call_id: 'call_1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
        },
      ],
      usage: USAGE_OUT,
    });
  });

  it('echoes the request: instructions, limits, tools (strict unless said), format, metadata', () => {
    const body = {
      instructions: 'Be brief.',
      max_output_tokens: 500,
      parallel_tool_calls: false,
      previous_response_id: 'resp_6',
      reasoning: { effort: 'low' },
      service_tier: 'flex',
      store: false,
      temperature: 0.2,
      top_p: 0.5,
      tool_choice: 'required',
      tools: [
        { type: 'function', name: 'f', parameters: { type: 'object' }, strict: false },
        { type: 'function', name: 'g' },
      ],
      text: { format: { type: 'json_object' } },
      user: 'u-1',
      metadata: { ticket: 'T-1' },
    };
    expect(answeredResponse(echo(body), chat({ content: 'ok' }))).toEqual({
      ...DEFAULTS,
      status: 'completed',
      instructions: 'Be brief.',
      max_output_tokens: 500,
      parallel_tool_calls: false,
      previous_response_id: 'resp_6',
      reasoning: { effort: 'low', summary: null },
      service_tier: 'flex',
      store: false,
      temperature: 0.2,
      top_p: 0.5,
      tool_choice: 'required',
      tools: [
        { strict: false, type: 'function', name: 'f', parameters: { type: 'object' } },
        { strict: true, type: 'function', name: 'g' },
      ],
      text: { format: { type: 'json_object' }, verbosity: 'medium' },
      user: 'u-1',
      metadata: { ticket: 'T-1' },
      output: [expect.objectContaining({ type: 'message' })],
      usage: USAGE_OUT,
    });
  });

  it('an answer cut at its limit is incomplete, with the reason', () => {
    const r = answeredResponse(echo({}), chat({ content: 'Once upon', finish_reason: 'length' }));
    expect([r.status, r.incomplete_details]).toEqual(['incomplete', { reason: 'max_output_tokens' }]);
    const filtered = answeredResponse(echo({}), chat({ content: '', finish_reason: 'content_filter' }));
    expect([filtered.status, filtered.incomplete_details, filtered.output]).toEqual([
      'incomplete',
      { reason: 'content_filter' },
      [],
    ]);
  });

  it('an in-progress response has no usage yet; a failed one carries its error', () => {
    const inProgress = responseObject(echo({}), { status: 'in_progress', output: [], usage: USAGE });
    expect(inProgress).toEqual({ ...DEFAULTS, status: 'in_progress', output: [] });
    // The spec types usage as an object and user as a string: absent, never null.
    expect(JSON.stringify(inProgress)).not.toMatch(/"(usage|user)":/);
    const failed = responseObject(echo({}), {
      status: 'failed',
      output: [],
      error: { code: 'upstream_error', message: 'boom' },
    });
    expect([failed.status, failed.error, failed.usage]).toEqual([
      'failed',
      { code: 'upstream_error', message: 'boom' },
      undefined,
    ]);
  });
});

describe('ResponsesStreamEncoder', () => {
  const run = (events: StreamEvent[]) => {
    const enc = new ResponsesStreamEncoder(echo({}));
    return { enc, out: [...enc.start(), ...events.flatMap((ev) => enc.next(ev))] };
  };

  it('text: created, in_progress, the item and its part added, deltas, then done in order and completed', () => {
    const { enc, out } = run([
      { type: 'delta', content: 'Hel' },
      { type: 'delta', content: 'lo' },
      { type: 'finish', finish_reason: 'stop' },
    ]);
    const { events, response } = enc.finish(USAGE);
    const all: TypedEvent[] = [...out, ...events];
    const msgId = (response.output as { id: string }[])[0]?.id;
    expect(msgId).toEqual(id('msg'));
    const inProgress = { ...DEFAULTS, status: 'in_progress', output: [] };
    const part = { type: 'output_text', text: 'Hello', annotations: [], logprobs: [] };
    const item = { id: msgId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    const text = { item_id: msgId, output_index: 0, content_index: 0 };
    expect(all).toEqual([
      { type: 'response.created', sequence_number: 0, response: inProgress },
      { type: 'response.in_progress', sequence_number: 1, response: inProgress },
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item },
      {
        type: 'response.content_part.added',
        sequence_number: 3,
        ...text,
        part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
      },
      { type: 'response.output_text.delta', sequence_number: 4, ...text, delta: 'Hel', logprobs: [] },
      { type: 'response.output_text.delta', sequence_number: 5, ...text, delta: 'lo', logprobs: [] },
      { type: 'response.output_text.done', sequence_number: 6, ...text, text: 'Hello', logprobs: [] },
      { type: 'response.content_part.done', sequence_number: 7, ...text, part },
      { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item },
      { type: 'response.completed', sequence_number: 9, response },
    ]);
    expect(response).toEqual({ ...DEFAULTS, status: 'completed', output: [item], usage: USAGE_OUT });
  });

  it('tool calls: one function_call item each, arguments streamed, closed in output order', () => {
    const { enc, out } = run([
      { type: 'delta', tool_calls: [{ index: 0, id: 'call_a', name: 'get_weather', arguments: '{"city":' }] },
      { type: 'delta', tool_calls: [{ index: 1, id: 'call_b', name: 'get_time' }] },
      { type: 'delta', tool_calls: [{ index: 0, arguments: '"Paris"}' }] },
      { type: 'finish', finish_reason: 'tool_calls' },
    ]);
    const { events, response } = enc.finish(USAGE);
    const [a, b] = (response.output as { id: string }[]).map((i) => i.id);
    const callA = {
      id: a,
      type: 'function_call',
      status: 'completed',
      call_id: 'call_a',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    };
    const callB = {
      id: b,
      type: 'function_call',
      status: 'completed',
      call_id: 'call_b',
      name: 'get_time',
      arguments: '',
    };
    expect(out.slice(2)).toEqual([
      { type: 'response.output_item.added', sequence_number: 2, output_index: 0, item: callA },
      {
        type: 'response.function_call_arguments.delta',
        sequence_number: 3,
        item_id: a,
        output_index: 0,
        delta: '{"city":',
      },
      { type: 'response.output_item.added', sequence_number: 4, output_index: 1, item: callB },
      {
        type: 'response.function_call_arguments.delta',
        sequence_number: 5,
        item_id: a,
        output_index: 0,
        delta: '"Paris"}',
      },
    ]);
    expect(events).toEqual([
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 6,
        item_id: a,
        output_index: 0,
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      { type: 'response.output_item.done', sequence_number: 7, output_index: 0, item: callA },
      {
        type: 'response.function_call_arguments.done',
        sequence_number: 8,
        item_id: b,
        output_index: 1,
        name: 'get_time',
        arguments: '',
      },
      { type: 'response.output_item.done', sequence_number: 9, output_index: 1, item: callB },
      { type: 'response.completed', sequence_number: 10, response },
    ]);
    expect(response.status).toBe('completed');
  });

  it('an answer cut at its limit ends with response.incomplete', () => {
    const { enc } = run([
      { type: 'delta', content: 'Once' },
      { type: 'finish', finish_reason: 'length' },
    ]);
    const { events, response } = enc.finish(USAGE);
    expect(events.at(-1)).toEqual({ type: 'response.incomplete', sequence_number: 8, response });
    expect([response.status, response.incomplete_details]).toEqual([
      'incomplete',
      { reason: 'max_output_tokens' },
    ]);
  });

  it('a failure after the start closes the open items as incomplete, then response.failed and error', () => {
    const { enc } = run([{ type: 'delta', content: 'Par' }]);
    const events = enc.fail('upstream_error', 'The stream failed after it started: reset');
    const msgId = events[0]?.item_id;
    const part = { type: 'output_text', text: 'Par', annotations: [], logprobs: [] };
    const item = { id: msgId, type: 'message', status: 'incomplete', role: 'assistant', content: [part] };
    expect(events.map((e) => e.type)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.failed',
      'error',
    ]);
    expect(events[3]).toEqual({
      type: 'response.failed',
      sequence_number: 8,
      response: {
        ...DEFAULTS,
        status: 'failed',
        error: { code: 'upstream_error', message: 'The stream failed after it started: reset' },
        output: [item],
      },
    });
    expect(events[4]).toEqual({
      type: 'error',
      sequence_number: 9,
      code: 'upstream_error',
      message: 'The stream failed after it started: reset',
      param: null,
    });
  });
});
