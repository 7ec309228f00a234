/** Anthropic's Message object and stream events for canonical results, and Claude's own passed through. */
import { describe, expect, it } from 'vitest';
import {
  type MessageContext,
  MessagesStreamEncoder,
  messageObject,
  messagesUsage,
  stopReason,
  toolInput,
} from '#gateway/encoders/encode-messages';
import type { ChatResult, StreamEvent, Usage } from '#gateway/providers/types';

const CTX: MessageContext = { id: 'msg_0a1b', model: 'support-bot', stops: undefined };
const USAGE: Usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };
const chat = (over: Partial<ChatResult>): ChatResult => ({
  kind: 'chat',
  id: 'chatcmpl-9',
  content: null,
  finish_reason: 'stop',
  usage: USAGE,
  model: 'gpt-4o-mini',
  ...over,
});

describe('messageObject', () => {
  it('text and tool calls as content blocks, the workflow as model', () => {
    const result = chat({
      content: 'Let me check.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
      finish_reason: 'tool_calls',
    });
    expect(messageObject(CTX, result)).toEqual({
      id: 'msg_0a1b',
      type: 'message',
      role: 'assistant',
      model: 'support-bot',
      content: [
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool_use',
          id: 'call_1',
          name: 'get_weather',
          input: { city: 'Paris' },
          caller: { type: 'direct' },
        },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 120,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 30,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      },
    });
  });

  it('a stop sequence: the one the provider names, else the request’s only one', () => {
    const named = messageObject(CTX, chat({ content: 'a', stop_sequence: 'END' }));
    expect([named.stop_reason, named.stop_sequence]).toEqual(['stop_sequence', 'END']);
    const only = messageObject({ ...CTX, stops: ['###'] }, chat({ content: 'a', stop_sequence: null }));
    expect([only.stop_reason, only.stop_sequence]).toEqual(['stop_sequence', '###']);
    const several = messageObject({ ...CTX, stops: ['a', 'b'] }, chat({ content: 'a', stop_sequence: null }));
    expect([several.stop_reason, several.stop_sequence]).toEqual(['stop_sequence', null]);
  });

  it('cache reads and writes are reported apart from input_tokens, writes by lifetime', () => {
    const u: Usage = {
      prompt_tokens: 1000,
      completion_tokens: 10,
      total_tokens: 1010,
      cache_read_tokens: 600,
      cache_write_tokens: 300,
      cache_write_1h_tokens: 100,
    };
    expect(messageObject(CTX, chat({ content: 'ok', usage: u })).usage).toEqual({
      input_tokens: 100,
      cache_creation_input_tokens: 300,
      cache_read_input_tokens: 600,
      output_tokens: 10,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
    });
    expect(messagesUsage(undefined)).toEqual({
      input_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 0,
    });
  });

  it("Claude's answer to a native request is sent as Claude sent it, with the workflow as model", () => {
    const body = {
      id: 'msg_claude',
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku-4-5',
      content: [
        { type: 'thinking', thinking: 'hm', signature: 's' },
        { type: 'text', text: 'Hi' },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 2 },
    };
    const result = chat({ content: 'Hi', native: { dialect: 'anthropic-messages', body } });
    expect(messageObject(CTX, result)).toEqual({ ...body, model: 'support-bot' });
  });

  it('stop reasons and tool inputs', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', 'other'].map(stopReason)).toEqual([
      'end_turn',
      'max_tokens',
      'tool_use',
      'refusal',
      'end_turn',
    ]);
    expect(toolInput('')).toEqual({});
    expect(toolInput('{"a":1}')).toEqual({ a: 1 });
    expect(toolInput('[1,2]')).toEqual({ value: [1, 2] });
    expect(toolInput('{"a":')).toEqual({ arguments: '{"a":' });
  });
});

describe('MessagesStreamEncoder', () => {
  const start = {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: 'msg_0a1b',
        type: 'message',
        role: 'assistant',
        model: 'support-bot',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 42,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          cache_creation: null,
        },
      },
    },
  };
  const ping = { event: 'ping', data: { type: 'ping' } };
  const delta = (index: number, d: Record<string, unknown>) => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: d },
  });
  const blockStart = (index: number, block: Record<string, unknown>) => ({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block: block },
  });
  const blockStop = (index: number) => ({
    event: 'content_block_stop',
    data: { type: 'content_block_stop', index },
  });

  it('text, then two tool calls: one block each, opened by its first delta', () => {
    const enc = new MessagesStreamEncoder(CTX, 42);
    const events: StreamEvent[] = [
      { type: 'delta', content: 'Checking' },
      { type: 'delta', content: ' both.' },
      { type: 'delta', tool_calls: [{ index: 0, id: 'call_a', name: 'get_weather', arguments: '{"city":' }] },
      { type: 'delta', tool_calls: [{ index: 0, arguments: '"Paris"}' }] },
      { type: 'delta', tool_calls: [{ index: 1, name: 'get_weather', arguments: '{"city":"Oslo"}' }] },
      { type: 'finish', finish_reason: 'tool_calls' },
      { type: 'usage', usage: USAGE },
    ];
    const out = [...events.flatMap((ev) => enc.next(ev)), ...enc.finish(USAGE)];
    expect(out).toEqual([
      start,
      ping,
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'Checking' }),
      delta(0, { type: 'text_delta', text: ' both.' }),
      blockStop(0),
      blockStart(1, {
        type: 'tool_use',
        id: 'call_a',
        name: 'get_weather',
        input: {},
        caller: { type: 'direct' },
      }),
      delta(1, { type: 'input_json_delta', partial_json: '{"city":' }),
      delta(1, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      blockStop(1),
      blockStart(2, {
        type: 'tool_use',
        id: 'toolu_msg_0a1b_1',
        name: 'get_weather',
        input: {},
        caller: { type: 'direct' },
      }),
      delta(2, { type: 'input_json_delta', partial_json: '{"city":"Oslo"}' }),
      blockStop(2),
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: {
            input_tokens: 120,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 30,
          },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });

  it('a stream with no content still opens and closes; a stop sequence is reported', () => {
    const enc = new MessagesStreamEncoder({ ...CTX, stops: ['END'] }, 42);
    expect(enc.next({ type: 'finish', finish_reason: 'stop', stop_sequence: null })).toEqual([start, ping]);
    expect(enc.finish(undefined)).toEqual([
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' },
          usage: {
            input_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 0,
          },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
    expect(new MessagesStreamEncoder(CTX, 42).finish(undefined).slice(0, 2)).toEqual([start, ping]);
  });

  it('a failing stream opens when nothing has, so the error event follows a message', () => {
    expect(new MessagesStreamEncoder(CTX, 42).failing()).toEqual([start, ping]);
    const started = new MessagesStreamEncoder(CTX, 42);
    started.next({ type: 'delta', content: 'a' });
    expect(started.failing()).toEqual([]);
  });

  it("Claude's own events pass as sent, with the workflow as model; its closing events wait for finish", () => {
    const enc = new MessagesStreamEncoder(CTX, 42);
    const native = (event: string, data: Record<string, unknown>): StreamEvent => ({
      type: 'native',
      dialect: 'anthropic-messages',
      event,
      data,
    });
    const msgStart = {
      type: 'message_start',
      message: { id: 'msg_claude', model: 'claude-haiku-4-5', content: [] },
    };
    expect(enc.next(native('message_start', msgStart))).toEqual([
      {
        event: 'message_start',
        data: { type: 'message_start', message: { id: 'msg_claude', model: 'support-bot', content: [] } },
      },
    ]);
    // The canonical events beside them are for the pipeline's tallies, not the client.
    expect(enc.next({ type: 'delta', content: 'Hi' })).toEqual([]);
    const d = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } };
    expect(enc.next(native('content_block_delta', d))).toEqual([{ event: 'content_block_delta', data: d }]);
    const md = { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } };
    expect(enc.next(native('message_delta', md))).toEqual([]);
    expect(enc.next(native('message_stop', { type: 'message_stop' }))).toEqual([]);
    expect(enc.finish(USAGE)).toEqual([
      { event: 'message_delta', data: md },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  });
});
