/**
 * POST /v1/responses bodies as the pipeline takes them (the canonical body, the input items as
 * stored, the conversation the next turn continues) and the refusals, from the surface's own
 * functions in the order the route calls them.
 */
import { describe, expect, it } from 'vitest';
import { answeredResponse } from '#gateway/encoders/encode-responses';
import type { ChatMessage, ChatResult } from '#gateway/providers/types';
import { responsesBody } from '#gateway/requests/responses-schema';
import { rejectResponsesParams, responsesToNative } from '#gateway/requests/responses-translate';
import { parseBody } from '#gateway/requests/zod-error';
import { assistantTurn } from '#gateway/stored-responses/record';
import { refusal } from './refusal.ts';

/** What the route does with a body: refuse, parse, translate. */
function translate(raw: Record<string, unknown>, history: readonly ChatMessage[] = [], sessionId?: string) {
  rejectResponsesParams(raw);
  return responsesToNative(parseBody(responsesBody, raw), history, sessionId);
}

const id = (prefix: string) => expect.stringMatching(new RegExp(`^${prefix}_[0-9a-f]{40}$`));
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};

describe('a Responses request as the canonical body', () => {
  it('a string input, instructions and the sampling parameters', () => {
    const turn = translate({
      model: 'support-bot',
      input: 'What is 2+2?',
      instructions: 'Be brief.',
      temperature: 0.3,
      top_p: 0.8,
      max_output_tokens: 300,
      reasoning: { effort: 'low', summary: 'auto' },
      metadata: { ticket: 'T-1' },
      user: 'u-42',
      service_tier: 'flex',
      stream: true,
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
    });
    expect(turn.native).toEqual({
      model: 'support-bot',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is 2+2?' },
      ],
      temperature: 0.3,
      top_p: 0.8,
      max_tokens: 300,
      reasoning_effort: 'low',
      metadata: { ticket: 'T-1' },
      user: 'u-42',
      service_tier: 'flex',
      stream: true,
    });
    expect(turn.items).toEqual([
      {
        type: 'message',
        id: id('msg'),
        role: 'user',
        status: 'completed',
        content: [{ type: 'input_text', text: 'What is 2+2?' }],
      },
    ]);
    // Instructions are not part of the conversation: the next turn sends its own.
    expect(turn.conversation).toEqual([{ role: 'user', content: 'What is 2+2?' }]);
  });

  it('message items: parts as content parts, one text part as a string, images for users only', () => {
    const turn = translate({
      model: 'm',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'https://img.example/cat.jpg', detail: 'low' },
          ],
        },
        {
          type: 'message',
          id: 'msg_prev',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Un chat.' }],
        },
        { role: 'user', content: [{ type: 'input_text', text: 'Sûr ?' }] },
      ],
    });
    expect(turn.native.messages).toEqual([
      { role: 'developer', content: 'Answer in French.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://img.example/cat.jpg', detail: 'low' } },
        ],
      },
      { role: 'assistant', content: 'Un chat.' },
      { role: 'user', content: 'Sûr ?' },
    ]);
    expect(turn.items.map((i) => [i.type, i.id, i.role])).toEqual([
      ['message', id('msg'), 'developer'],
      ['message', id('msg'), 'user'],
      ['message', 'msg_prev', 'assistant'],
      ['message', id('msg'), 'user'],
    ]);
    expect(turn.items[2]).toEqual({
      type: 'message',
      id: 'msg_prev',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Un chat.' }],
    });
  });

  it('tools, tool_choice, parallel calls and a JSON schema format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } } };
    const turn = translate({
      model: 'm',
      input: 'Weather in Paris?',
      tools: [WEATHER],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } },
    });
    expect(turn.native).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: WEATHER.parameters,
            strict: true,
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(
      translate({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } }).native.response_format,
    ).toEqual({
      type: 'json_object',
    });
  });

  it('a tool call round trip: the answer stored, then continued with the call’s output', () => {
    const first = translate({ model: 'm', input: 'Weather in Paris?', tools: [WEATHER] });
    const answer: ChatResult = {
      kind: 'chat',
      id: 'chatcmpl-1',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
      finish_reason: 'tool_calls',
      usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
      model: 'gpt-4o-mini',
    };
    const response = answeredResponse(
      { id: 'resp_1', createdAt: 1_764_000_000, model: 'm', body: {} as never },
      answer,
    );
    // What the route stores for the next turn.
    const history = [...first.conversation, assistantTurn(response.output)];
    const second = translate(
      {
        model: 'm',
        previous_response_id: 'resp_1',
        input: [{ type: 'function_call_output', call_id: 'call_1', output: '18°C, clear' }],
        tools: [WEATHER],
      },
      history,
    );
    expect(second.native.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C, clear' },
    ]);
    expect(second.items).toEqual([
      {
        type: 'function_call_output',
        id: id('fco'),
        call_id: 'call_1',
        output: '18°C, clear',
        status: 'completed',
      },
    ]);
    expect(second.conversation).toEqual(second.native.messages);
  });

  it('a stateless round trip: the calls sent back as input join the assistant message before them', () => {
    const turn = translate({
      model: 'm',
      store: false,
      input: [
        { role: 'user', content: 'Weather in Paris and Oslo?' },
        { type: 'function_call', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_b', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'call_a', output: '18°C' },
        { type: 'function_call_output', call_id: 'call_b', output: [{ type: 'input_text', text: '4°C' }] },
      ],
    });
    expect(turn.native.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Oslo?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '18°C' },
      { role: 'tool', tool_call_id: 'call_b', content: '4°C' },
    ]);
    expect(turn.items[1]).toEqual({
      type: 'function_call',
      id: id('fc'),
      call_id: 'call_a',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
  });

  it('a session continues by its id: only this turn’s input is sent', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
    ];
    const turn = translate(
      { model: 'm', input: 'What is my name?', instructions: 'Be brief.' },
      history,
      'sess-1',
    );
    expect(turn.native.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect(turn.native.session_id).toBe('sess-1');
    expect(turn.conversation).toEqual([...history, { role: 'user', content: 'What is my name?' }]);
  });
});

describe('Responses refusals', () => {
  it('refused and unknown parameters, and include values other than reasoning.encrypted_content', () => {
    expect(refusal(() => translate({ model: 'm', input: 'x', max_tool_calls: 3 }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "max_tool_calls" is not supported by this gateway.',
      param: 'max_tool_calls',
    });
    expect(() =>
      translate({ model: 'm', input: 'x', background: false, conversation: null, prompt: [] }),
    ).not.toThrow();
    expect(refusal(() => translate({ model: 'm', input: 'x', seed: 7 }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'The parameter "seed" is not known to this gateway.',
      param: 'seed',
    });
    expect(
      refusal(() => translate({ model: 'm', input: 'x', include: ['file_search_call.results'] })),
    ).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'include "file_search_call.results" is not supported: only reasoning.encrypted_content is.',
      param: 'include',
    });
  });

  it('what the translation cannot honour: truncation auto, verbosity, built-in tools, item types, file ids', () => {
    expect(refusal(() => translate({ model: 'm', input: 'x', truncation: 'auto' }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'truncation "auto" is not supported: the gateway never drops input items.',
      param: 'truncation',
    });
    expect(refusal(() => translate({ model: 'm', input: 'x', text: { verbosity: 'low' } })).param).toBe(
      'text.verbosity',
    );
    expect(refusal(() => translate({ model: 'm', input: 'x', tools: [{ type: 'web_search' }] }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message:
        'The tool type "web_search" is not supported by this workflow: its hostedTools policy refuses it; send function, custom or namespace tools.',
      param: 'tools[0].type',
    });
    expect(refusal(() => translate({ model: 'm', input: [{ type: 'reasoning', summary: [] }] }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message:
        'The input item type "reasoning" is not supported: send message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, compaction items.',
      param: 'input[0].type',
    });
    const byFile = { role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] };
    expect(refusal(() => translate({ model: 'm', input: [byFile] }))).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'Images by file_id are not supported: send image_url (a URL or data: URI).',
      param: 'input[0].content[0].file_id',
    });
  });

  it('invalid tools and items, named where they stand', () => {
    expect(
      refusal(() => translate({ model: 'm', input: 'x', tools: [{ ...WEATHER, name: 'get.weather' }] })),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid tool: names are 1-64 letters, digits, _ or -.',
      param: 'tools[0].name',
    });
    expect(
      refusal(() =>
        translate({ model: 'm', input: 'x', tools: [{ ...WEATHER, parameters: { type: 'array' } }] }),
      ),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid tool: parameters must be a JSON schema of type "object".',
      param: 'tools[0].parameters',
    });
    expect(refusal(() => translate({ model: 'm', input: [] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'input must not be empty.',
      param: 'input',
    });
    expect(refusal(() => translate({ model: 'm', input: [{ role: 'robot', content: 'x' }] })).param).toBe(
      'input[0].role',
    );
    const image = { type: 'input_image', image_url: 'https://img.example/a.png' };
    expect(
      refusal(() => translate({ model: 'm', input: [{ role: 'assistant', content: [image] }] })),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Only user messages may carry images.',
      param: 'input[0].content[0]',
    });
  });

  it('function calls and outputs must pair up', () => {
    const call = { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' };
    const output = (call_id: string) => ({ type: 'function_call_output', call_id, output: 'ok' });
    expect(refusal(() => translate({ model: 'm', input: [output('call_9')] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'No function_call with call_id "call_9" comes before this function_call_output.',
      param: 'input[0].call_id',
    });
    expect(
      refusal(() => translate({ model: 'm', input: [call, output('call_1'), output('call_1')] })),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'The function call "call_1" already has an output.',
      param: 'input[2].call_id',
    });
    expect(
      refusal(() => translate({ model: 'm', input: [call, { role: 'user', content: 'well?' }] })),
    ).toEqual({
      code: 'invalid_request',
      status: 400,
      message:
        'No function_call_output for call_id "call_1": send each function call\'s output before the next message.',
      param: 'input[1]',
    });
    expect(refusal(() => translate({ model: 'm', input: [call] }))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'No function_call_output for call_id "call_1".',
      param: 'input',
    });
    expect(
      refusal(() =>
        translate(
          {
            model: 'm',
            input: [{ type: 'function_call_output', call_id: 'call_1', output: [{ type: 'input_image' }] }],
          },
          [
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
            },
          ],
        ),
      ),
    ).toEqual({
      code: 'unsupported_parameter',
      status: 400,
      message: 'function_call_output carries text only: send output as a string or input_text parts.',
      param: 'input[0].output',
    });
  });
});
