/**
 * Namespace, custom and hosted tools of POST /v1/responses: what the providers are offered (flat
 * function tools), the items their calls come back as (the spec's `namespace`, custom_tool_call),
 * the round trip through a stored conversation, and the hosted-tool policy (refuse by default,
 * omit when the workflow says so).
 */
import { describe, expect, it } from 'vitest';
import { answeredResponse } from '#gateway/encoders/encode-responses';
import { ResponsesStreamEncoder } from '#gateway/encoders/encode-responses-stream';
import type { ChatMessage, ChatResult } from '#gateway/providers/types';
import { responsesBody } from '#gateway/requests/responses-schema';
import { flatName, type HostedToolPolicy, responsesTools } from '#gateway/requests/responses-tools';
import { rejectResponsesParams, responsesToNative } from '#gateway/requests/responses-translate';
import { parseBody } from '#gateway/requests/zod-error';
import { assistantTurn } from '#gateway/stored-responses/record';
import { refusal } from './refusal.ts';

function translate(
  raw: Record<string, unknown>,
  history: readonly ChatMessage[] = [],
  policy?: HostedToolPolicy,
) {
  rejectResponsesParams(raw);
  const body = parseBody(responsesBody, raw);
  return { body, turn: responsesToNative(body, history, undefined, policy) };
}

const SPAWN = {
  type: 'function',
  name: 'spawn_agent',
  description: 'Start a sub-agent',
  parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
};
const AGENTS = { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents', tools: [SPAWN] };
const PATCH = {
  type: 'custom',
  name: 'apply_patch',
  description: 'Edit files',
  format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /.+/' },
};
const SHELL = { type: 'function', name: 'shell', parameters: { type: 'object', properties: {} } };

function answer(name: string, args: string): ChatResult {
  return {
    kind: 'chat',
    id: 'chatcmpl-1',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: args } }],
    finish_reason: 'tool_calls',
    usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
    model: 'gpt-4o-mini',
  };
}

describe('namespace and custom tools offered to a provider', () => {
  it('a namespace is flattened to <namespace>__<name>; a custom tool is a function with one string input', () => {
    const { turn } = translate({ model: 'm', input: 'x', tools: [SHELL, AGENTS, PATCH] });
    expect(turn.native.tools).toEqual([
      { type: 'function', function: { name: 'shell', parameters: { type: 'object', properties: {} } } },
      {
        type: 'function',
        function: {
          name: 'multi_agent_v1__spawn_agent',
          description: 'Start a sub-agent',
          parameters: SPAWN.parameters,
        },
      },
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          description: 'Edit files',
          parameters: {
            type: 'object',
            properties: {
              input: {
                type: 'string',
                description: `The tool's whole input, as free text. It must follow this lark grammar:\nstart: "*** Begin Patch" /.+/`,
              },
            },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
  });

  it('flat names stay within the 64-character rule and never take another tool’s name', () => {
    const long = flatName('n'.repeat(40), 't'.repeat(40));
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(long).not.toBe(flatName('n'.repeat(40), 't'.repeat(41)));
    const clash = { type: 'function', name: 'ns__a' };
    const { names, tools } = responsesTools(
      [clash, { type: 'namespace', name: 'ns', description: 'd', tools: [{ type: 'function', name: 'a' }] }],
      { default: 'refuse' },
    );
    const flat = tools.map((t) => t.function.name);
    expect(new Set(flat).size).toBe(2);
    expect(flat[1]).toMatch(/^ns__a_[0-9a-f]{8}$/);
    expect(names.ref(flat[1]!)).toEqual({ namespace: 'ns', name: 'a', custom: false });
    expect(names.ref('ns__a')).toEqual({ name: 'ns__a', custom: false });
  });

  it('bad namespace and custom tools are refused with a 400 naming the place', () => {
    expect(
      refusal(() =>
        translate({ model: 'm', input: 'x', tools: [{ type: 'namespace', name: 'n', tools: [] }] }),
      ),
    ).toMatchObject({ status: 400, code: 'invalid_request', param: 'tools[0].tools' });
    expect(
      refusal(() =>
        translate({
          model: 'm',
          input: 'x',
          tools: [{ type: 'namespace', name: 'n', description: 'd', tools: [{ type: 'web_search' }] }],
        }),
      ),
    ).toMatchObject({ status: 400, code: 'invalid_request', param: 'tools[0].tools[0].type' });
    expect(
      refusal(() =>
        translate({
          model: 'm',
          input: 'x',
          tools: [{ type: 'custom', name: 'c', format: { type: 'xml' } }],
        }),
      ),
    ).toMatchObject({ status: 400, code: 'invalid_request', param: 'tools[0].format' });
  });
});

describe('calls come back as the spec shapes them, and round-trip', () => {
  it('a namespaced function call carries its namespace; a custom call its input', () => {
    const { body, turn } = translate({ model: 'm', input: 'x', tools: [AGENTS, PATCH] });
    const echo = { id: 'resp_1', createdAt: 1, model: 'm', body, toolNames: turn.toolNames };
    const ns = answeredResponse(echo, answer('multi_agent_v1__spawn_agent', '{"task":"t"}'));
    expect(ns.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_1',
        namespace: 'multi_agent_v1',
        name: 'spawn_agent',
        arguments: '{"task":"t"}',
      }),
    ]);
    const custom = answeredResponse(
      echo,
      answer('apply_patch', JSON.stringify({ input: '*** Begin Patch\n' })),
    );
    expect(custom.output).toEqual([
      {
        id: expect.stringMatching(/^ctc_/),
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_1',
        name: 'apply_patch',
        input: '*** Begin Patch\n',
      },
    ]);
  });

  it('stored output and input items with namespace / custom_tool_call translate back to the flat names', () => {
    const { body, turn } = translate({ model: 'm', input: 'Patch it', tools: [AGENTS, PATCH] });
    const echo = { id: 'resp_1', createdAt: 1, model: 'm', body, toolNames: turn.toolNames };
    const response = answeredResponse(echo, answer('apply_patch', '{"input":"diff"}'));
    const history = [...turn.conversation, assistantTurn(response.output, turn.toolNames)];
    const second = translate(
      {
        model: 'm',
        previous_response_id: 'resp_1',
        input: [
          { type: 'custom_tool_call_output', call_id: 'call_1', output: 'Done' },
          {
            type: 'function_call',
            call_id: 'call_2',
            namespace: 'multi_agent_v1',
            name: 'spawn_agent',
            arguments: '{}',
          },
          { type: 'function_call_output', call_id: 'call_2', output: 'spawned' },
          { type: 'custom_tool_call', call_id: 'call_3', name: 'apply_patch', input: 'more' },
          {
            type: 'custom_tool_call_output',
            call_id: 'call_3',
            output: [{ type: 'input_text', text: 'ok' }],
          },
        ],
        tools: [AGENTS, PATCH],
      },
      history,
    ).turn;
    expect(second.native.messages).toEqual([
      { role: 'user', content: 'Patch it' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'apply_patch', arguments: '{"input":"diff"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Done' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_2',
            type: 'function',
            function: { name: 'multi_agent_v1__spawn_agent', arguments: '{}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: 'spawned' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_3',
            type: 'function',
            function: { name: 'apply_patch', arguments: '{"input":"more"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_3', content: 'ok' },
    ]);
    expect(second.items.map((i) => [i.type, i.id.split('_')[0]])).toEqual([
      ['custom_tool_call_output', 'ctco'],
      ['function_call', 'fc'],
      ['function_call_output', 'fco'],
      ['custom_tool_call', 'ctc'],
      ['custom_tool_call_output', 'ctco'],
    ]);
    expect(second.items[1]).toMatchObject({ namespace: 'multi_agent_v1', name: 'spawn_agent' });
  });

  it('streamed: a namespaced call’s item has its namespace; a custom call ends with its input events', () => {
    const { body, turn } = translate({ model: 'm', input: 'x', tools: [AGENTS, PATCH] });
    const enc = new ResponsesStreamEncoder({
      id: 'resp_1',
      createdAt: 1,
      model: 'm',
      body,
      toolNames: turn.toolNames,
    });
    enc.start();
    const added = enc.next({
      type: 'delta',
      tool_calls: [
        { index: 0, id: 'call_1', name: 'multi_agent_v1__spawn_agent', arguments: '{}' },
        { index: 1, id: 'call_2', name: 'apply_patch', arguments: '{"input":' },
      ],
    });
    enc.next({ type: 'delta', tool_calls: [{ index: 1, arguments: '"a\\nb"}' }] });
    const types = added.map((e) => e.type);
    expect(types).toEqual([
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.output_item.added',
    ]);
    expect(added[0]!.item).toMatchObject({
      type: 'function_call',
      namespace: 'multi_agent_v1',
      name: 'spawn_agent',
    });
    expect(added[2]!.item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '' });
    const { events, response } = enc.finish(undefined);
    expect(events.map((e) => e.type)).toEqual([
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[3]).toMatchObject({ input: 'a\nb', output_index: 1 });
    expect((response.output as unknown[])[1]).toMatchObject({
      type: 'custom_tool_call',
      input: 'a\nb',
      status: 'completed',
    });
  });
});

describe('hosted tools under the workflow policy', () => {
  it('refused by default: a 400 in the Responses error shape naming the tool, never a 5xx', () => {
    const e = refusal(() =>
      translate({
        model: 'm',
        input: 'x',
        tools: [SHELL, { type: 'web_search', external_web_access: false }],
      }),
    );
    expect(e).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'tools[1].type' });
    expect(e.message).toContain('"web_search"');
  });

  it('omitted where the policy says so, each named once; a tool the policy refuses is still refused', () => {
    const policy: HostedToolPolicy = { default: 'omit', tools: { mcp: 'refuse' } };
    const { turn } = translate(
      {
        model: 'm',
        input: 'x',
        tools: [{ type: 'web_search' }, SHELL, { type: 'image_generation' }, { type: 'web_search' }],
      },
      [],
      policy,
    );
    expect(turn.omittedTools).toEqual(['web_search', 'image_generation']);
    expect(turn.native.tools?.map((t) => t.function.name)).toEqual(['shell']);
    expect(
      refusal(() =>
        translate({ model: 'm', input: 'x', tools: [{ type: 'mcp', server_label: 's' }] }, [], policy),
      ),
    ).toMatchObject({ status: 400, param: 'tools[0].type' });
    expect(
      refusal(() => translate({ model: 'm', input: 'x', tools: [{ name: 'no_type' }] }, [], policy)),
    ).toMatchObject({ status: 400, code: 'invalid_request', param: 'tools[0].type' });
    const onlyHosted = translate(
      { model: 'm', input: 'x', tools: [{ type: 'tool_search' }] },
      [],
      policy,
    ).turn;
    expect(onlyHosted.native.tools).toBeUndefined();
  });
});
