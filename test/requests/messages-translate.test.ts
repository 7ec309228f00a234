/**
 * POST /v1/messages bodies as the pipeline takes them: the canonical body, the body as sent for
 * Claude, and the refusals, from the surface's own functions in the order the route calls them.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { promptMessages } from '#gateway/requests/messages-prompt';
import { countTokensBody, messagesBody } from '#gateway/requests/messages-schema';
import {
  checkMessagesBreakpoints,
  messagesRequest,
  rejectCountTokensParams,
  rejectMessagesParams,
} from '#gateway/requests/messages-translate';
import { parseBody } from '#gateway/requests/zod-error';
import { refusal } from './refusal.ts';

/** What the route does with a body: refuse, parse, translate. */
function translate(raw: Record<string, unknown>, headers: IncomingHttpHeaders = {}) {
  rejectMessagesParams(raw);
  return messagesRequest(parseBody(messagesBody, raw), raw, headers);
}

const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEATHER = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const base = { model: 'support-bot', max_tokens: 256 };

describe('a Messages request as the canonical body', () => {
  it('system, sampling, stops and the user id', () => {
    const raw = {
      ...base,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'What is 2+2?' }],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
      service_tier: 'standard_only',
      stream: true,
    };
    expect(translate(raw)).toEqual({
      body: {
        model: 'support-bot',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What is 2+2?' },
        ],
        max_tokens: 256,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 40,
        stop: ['END'],
        user: 'u-42',
        service_tier: 'default',
        stream: true,
      },
      native: {
        dialect: 'anthropic-messages',
        body: {
          max_tokens: 256,
          system: 'Be brief.',
          messages: [{ role: 'user', content: 'What is 2+2?' }],
          temperature: 0.2,
          top_p: 0.9,
          top_k: 40,
          stop_sequences: ['END'],
          metadata: { user_id: 'u-42' },
          service_tier: 'standard_only',
        },
        headers: {},
        turns: 1,
        system: 'Be brief.',
      },
    });
  });

  it('system blocks and leading system turns make one system text', () => {
    const raw = {
      ...base,
      system: [
        { type: 'text', text: 'You are a support agent.' },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [
        { role: 'system', content: 'The customer is on the Pro plan.' },
        { role: 'user', content: 'Bonjour' },
      ],
    };
    const { body, native } = translate(raw);
    expect(body.messages).toEqual([
      {
        role: 'system',
        content: 'You are a support agent.\n\nAnswer in French.\n\nThe customer is on the Pro plan.',
      },
      { role: 'user', content: 'Bonjour' },
    ]);
    expect([native.turns, native.system]).toEqual([
      1,
      'You are a support agent.\n\nAnswer in French.\n\nThe customer is on the Pro plan.',
    ]);
  });

  it('images as image parts, base64 as a data: URI', () => {
    const raw = {
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://img.example/cat.jpg' } },
            { type: 'text', text: 'What are these?' },
          ],
        },
      ],
    };
    expect(translate(raw).body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: 'https://img.example/cat.jpg' } },
          { type: 'text', text: 'What are these?' },
        ],
      },
    ]);
  });

  it('a tool call and its result: tool_use as a tool call, tool_result as the tool message after it', () => {
    const raw = {
      ...base,
      tools: [WEATHER],
      tool_choice: { type: 'auto' },
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01', content: '18°C, clear' },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    };
    const { body } = translate(raw);
    expect(body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          {
            id: 'toolu_01',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: '18°C, clear' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: WEATHER.input_schema,
        },
      },
    ]);
    expect(body.tool_choice).toBe('auto');
  });

  it('an error result says so in its text; its images follow as the user turn’s parts', () => {
    const raw = {
      ...base,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather on Mars?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_02', name: 'get_weather', input: { city: 'Mars' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_02',
              is_error: true,
              content: [
                { type: 'text', text: 'unknown city' },
                { type: 'image', source: { type: 'url', url: 'https://img.example/map.png' } },
              ],
            },
          ],
        },
      ],
    };
    expect(translate(raw).body.messages).toEqual([
      { role: 'user', content: 'Weather on Mars?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'toolu_02',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Mars"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_02', content: 'Error: unknown city' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://img.example/map.png' } }] },
    ]);
  });

  it("tool search (Claude Code's deferred tools): translated providers get the tool up front and the found tool as text; Claude gets both as written", () => {
    const search = {
      name: 'ToolSearch',
      input_schema: { type: 'object', properties: { query: { type: 'string' } } },
    };
    const raw = {
      ...base,
      tools: [search, { ...WEATHER, defer_loading: true }],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_01', name: 'ToolSearch', input: { query: 'weather' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              content: [{ type: 'tool_reference', tool_name: 'get_weather' }],
            },
          ],
        },
      ],
    };
    const { body, native } = translate(raw, {
      'anthropic-beta': 'advanced-tool-use-2025-11-20,unknown-beta-1',
    });
    expect(body.tools?.map((t) => t.function.name)).toEqual(['ToolSearch', 'get_weather']);
    expect(body.messages?.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'toolu_01',
      content: 'Tool "get_weather" is loaded.',
    });
    expect(native.body.tools).toEqual(raw.tools);
    expect(native.headers).toEqual({ 'anthropic-beta': 'advanced-tool-use-2025-11-20' });
    expect(refusal(() => translate({ ...raw, tools: [{ ...WEATHER, defer_loading: 'yes' }] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid tool: defer_loading must be a boolean.',
      param: 'tools[0].defer_loading',
    });
  });

  it("thinking blocks are Claude's alone: the canonical turn leaves them out, the native body keeps them", () => {
    const assistant = {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants a number.', signature: 'sig-1' },
        { type: 'text', text: '4' },
      ],
    };
    const raw = {
      ...base,
      messages: [{ role: 'user', content: '2+2?' }, assistant, { role: 'user', content: 'Times 3?' }],
    };
    const { body, native } = translate(raw);
    expect(body.messages).toEqual([
      { role: 'user', content: '2+2?' },
      { role: 'assistant', content: '4' },
      { role: 'user', content: 'Times 3?' },
    ]);
    expect((native.body.messages as unknown[])[1]).toEqual(assistant);
  });

  it('tool_choice: any is required, tool names the function, disable_parallel_tool_use turns parallel calls off', () => {
    const choice = (tool_choice: unknown) =>
      translate({ ...base, tools: [WEATHER], tool_choice, messages: [{ role: 'user', content: 'hi' }] }).body;
    expect(choice({ type: 'any' })).toMatchObject({ tool_choice: 'required' });
    expect(choice({ type: 'none' })).toMatchObject({ tool_choice: 'none' });
    const forced = choice({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
    expect([forced.tool_choice, forced.parallel_tool_calls]).toEqual([
      { type: 'function', function: { name: 'get_weather' } },
      false,
    ]);
  });

  it('effort: output_config first, else the thinking budget', () => {
    const effort = (extra: Record<string, unknown>) =>
      translate({ ...base, max_tokens: 32_000, messages: [{ role: 'user', content: 'hi' }], ...extra }).body
        .reasoning_effort;
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 2048 } })).toBe('low');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 8192 } })).toBe('medium');
    expect(effort({ thinking: { type: 'enabled', budget_tokens: 20_000 } })).toBe('high');
    expect(effort({ thinking: { type: 'adaptive' } })).toBeUndefined();
    expect(effort({ output_config: { effort: 'max' } })).toBe('high');
    expect(effort({ output_config: { effort: 'high' } })).toBeUndefined();
    expect(
      effort({ output_config: { effort: 'low' }, thinking: { type: 'enabled', budget_tokens: 20_000 } }),
    ).toBe('low');
  });

  it('x-session-id continues a session; anthropic-beta passes the features Claude may use', () => {
    const { body, native } = translate(
      { ...base, messages: [{ role: 'user', content: 'hi' }] },
      {
        'x-session-id': 'sess-7',
        'anthropic-beta': 'interleaved-thinking-2025-05-14, files-api-2025-04-14,prompt-caching-2024-07-31',
      },
    );
    expect(body.session_id).toBe('sess-7');
    expect(native.headers).toEqual({
      'anthropic-beta': 'interleaved-thinking-2025-05-14,prompt-caching-2024-07-31',
    });
  });

  it('cache_control on system blocks and turns becomes breakpoints at the end of their message', () => {
    const raw = {
      ...base,
      system: [{ type: 'text', text: 'Long manual.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Question one', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'Question two' },
          ],
        },
      ],
    };
    expect(translate(raw).body.messages).toEqual([
      { role: 'system', content: 'Long manual.', cache: { ttl: '1h' } },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Question one' },
          { type: 'text', text: 'Question two' },
        ],
        cache: {},
      },
    ]);
  });
});

describe('Messages refusals', () => {
  const hi = [{ role: 'user', content: 'hi' }];

  it('refused and unknown parameters, and metadata beyond user_id', () => {
    expect(refusal(() => translate({ ...base, messages: hi, container: 'cntr_1' }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "container" is not supported by this gateway.',
      param: 'container',
    });
    expect(() => translate({ ...base, messages: hi, mcp_servers: [], container: null })).not.toThrow();
    expect(refusal(() => translate({ ...base, messages: hi, top_logprobs: 3 }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "top_logprobs" is not known to this gateway.',
      param: 'top_logprobs',
    });
    expect(
      refusal(() => translate({ ...base, messages: hi, metadata: { user_id: 'u', tier: 'gold' } })),
    ).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "metadata.tier" is not supported: metadata takes user_id.',
      param: 'metadata.tier',
    });
  });

  it('count_tokens takes the prompt half only', () => {
    const prompt = { model: 'support-bot', messages: hi, system: 'Be brief.' };
    expect(() => rejectCountTokensParams(prompt)).not.toThrow();
    expect(refusal(() => rejectCountTokensParams({ ...prompt, max_tokens: 10 }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "max_tokens" is not known to this gateway.',
      param: 'max_tokens',
    });
    expect(refusal(() => rejectCountTokensParams({ ...prompt, mcp_servers: [{ url: 'x' }] })).param).toBe(
      'mcp_servers',
    );
    expect(promptMessages(parseBody(countTokensBody, prompt))).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('tools: server tools, bad names, non-object schemas and unknown fields', () => {
    const withTools = (tools: unknown[]) => () => translate({ ...base, messages: hi, tools });
    expect(refusal(withTools([{ type: 'web_search_20250305', name: 'web_search' }]))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message:
        'The tool type "web_search_20250305" is not supported: only client tools with input_schema are.',
      param: 'tools[0].type',
    });
    expect(refusal(withTools([WEATHER, { ...WEATHER, name: 'get weather' }]))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid tool: names are 1-64 letters, digits, _ or -.',
      param: 'tools[1].name',
    });
    expect(refusal(withTools([{ ...WEATHER, input_schema: { type: 'string' } }]))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid tool: input_schema must be a JSON schema of type "object".',
      param: 'tools[0].input_schema',
    });
    expect(refusal(withTools([{ ...WEATHER, input_examples: [{ city: 'Oslo' }] }]))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The tool field "input_examples" is not supported by this gateway.',
      param: 'tools[0].input_examples',
    });
    expect(refusal(() => translate({ ...base, messages: hi, tool_choice: { type: 'any' } }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'tool_choice "any" needs tools.',
      param: 'tool_choice',
    });
  });

  it('content blocks: an unknown type, and a malformed block, named where they stand', () => {
    const doc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } };
    expect(refusal(() => translate({ ...base, messages: [{ role: 'user', content: [doc] }] }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message:
        'The content block type "document" is not supported: send text, image, tool_use, tool_result, thinking, redacted_thinking blocks.',
      param: 'messages[0].content[0].type',
    });
    const bad = { type: 'image', source: { type: 'url', url: 'ftp://img.example/a.png' } };
    expect(refusal(() => translate({ ...base, messages: [{ role: 'user', content: [bad] }] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid messages[0].content[0]: source.url: must be an http(s) URL',
      param: 'messages[0].content[0].source.url',
    });
  });

  it('tool_use and tool_result must pair up', () => {
    const call = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: {} }],
    };
    const result = (id: string) => ({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }],
    });
    expect(refusal(() => translate({ ...base, messages: [...hi, call, result('toolu_8')] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'No tool_use with id "toolu_8" in the assistant turn before this tool_result.',
      param: 'messages[2].content[0].tool_use_id',
    });
    expect(
      refusal(() => translate({ ...base, messages: [...hi, call, { role: 'user', content: 'well?' }] })),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'messages[2]: the tool_use "toolu_9" has no tool_result in this turn.',
      param: 'messages[2]',
    });
    expect(refusal(() => translate({ ...base, messages: [...hi, call] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'The tool_use "toolu_9" has no tool_result: end with a user turn that carries it.',
      param: 'messages',
    });
    expect(
      refusal(() =>
        translate({
          ...base,
          messages: [
            ...hi,
            { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'y' }] },
          ],
        }),
      ),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'tool_result blocks belong in user turns.',
      param: 'messages[1].content[0]',
    });
  });

  it("more than four breakpoints, or an hour's after five minutes', are refused as Claude would", () => {
    const mark = (ttl?: string) => ({
      type: 'text',
      text: 't',
      cache_control: { type: 'ephemeral', ...(ttl ? { ttl } : {}) },
    });
    const five = {
      model: 'm',
      messages: [{ role: 'user', content: [mark(), mark(), mark(), mark(), mark()] }],
    };
    expect(refusal(() => checkMessagesBreakpoints(parseBody(countTokensBody, five)))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.',
      param: 'messages',
    });
    const order = { model: 'm', system: [mark('5m')], messages: [{ role: 'user', content: [mark('1h')] }] };
    expect(refusal(() => checkMessagesBreakpoints(parseBody(countTokensBody, order))).param).toBe('messages');
  });
});
