import { randomHex } from '../domain/ids.ts';
import { GatewayError } from '../errors/index.ts';
import type { ChatMessage, ContentPart, ToolCall } from '../providers/types.ts';
import { compactionMessage } from './compaction.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refusedWhenSet, refuseParams, unsupported } from './param-rules.ts';
import {
  INPUT_ITEMS,
  ITEM_TYPES,
  RESPONSES_REFUSED,
  type ResponsesBody,
  type ResponsesContentPart,
  type ResponsesInputItem,
  responsesBody,
} from './responses-schema.ts';
import {
  callOfItem,
  type HostedToolPolicy,
  REFUSE_HOSTED,
  responsesTools,
  type ToolNames,
} from './responses-tools.ts';
import { invalidRequest } from './zod-error.ts';

/**
 * Every key of responsesBody that is carried into the pipeline's body, or read by the surface itself
 * (`store`, `previous_response_id`, `stream`, `metadata`, `truncation: disabled`). The surface refuses
 * RESPONSES_REFUSED and any key the schema does not know. test/gateway/responses/params.test.ts
 * fails when a key of the schema is in neither list.
 */
export const RESPONSES_MAPPED = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'temperature',
  'top_p',
  'max_output_tokens',
  'reasoning',
  'metadata',
  'store',
  'previous_response_id',
  'conversation',
  'stream',
  'background',
  'user',
  'service_tier',
  'truncation',
  'include',
  'prompt_cache_key',
  'client_metadata',
] as const;

/**
 * Accepted, and changing nothing in the answer (Codex CLI sends each of them):
 * - `include: ["reasoning.encrypted_content"]` asks for a field of reasoning items, and the gateway
 *   returns no reasoning items; any other include value is refused;
 * - `reasoning.summary` asks for summaries of reasoning items, likewise never returned;
 * - `prompt_cache_key` is a provider-side caching hint;
 * - `client_metadata` is the client's own labels for its telemetry.
 */
export const RESPONSES_HINTS = [
  'include',
  'reasoning.summary',
  'prompt_cache_key',
  'client_metadata',
] as const;
export const newId = (prefix: string): string => `${prefix}_${randomHex(20)}`;

const RESPONSES_PARAMS = paramRules(responsesBody.shape, refusedWhenSet(RESPONSES_REFUSED), {
  values: { include: ['reasoning.encrypted_content'] },
});

/** Refuses what the gateway cannot honour before the schema names anything else. */
export function rejectResponsesParams(raw: unknown): void {
  refuseParams(raw, RESPONSES_PARAMS);
}

/** An input item as stored and listed by GET /v1/responses/{id}/input_items: always with an id. */
export type StoredItem = Record<string, unknown> & { id: string; type: string };

/** What one Responses request puts into the pipeline, and what it stores. */
export interface ResponsesTurn {
  native: NativeBody;
  /** This request's input items, normalised, each with an id. */
  items: StoredItem[];
  /** The conversation without instructions (the previous one and this input), for the next turn. */
  conversation: ChatMessage[];
  /** The provider-facing tool names and the client's tools behind them. */
  toolNames: ToolNames;
  /** Hosted tool types the workflow's policy omitted. */
  omittedTools: string[];
}

export function parseItems(input: ResponsesBody['input']): ResponsesInputItem[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  if (input.length === 0)
    throw new GatewayError('invalid_request', 'input must not be empty.', { param: 'input' });
  return input.map((raw, i) => {
    const type = raw && typeof raw === 'object' ? (raw as { type?: unknown }).type : undefined;
    if (type !== undefined && !(ITEM_TYPES as readonly unknown[]).includes(type))
      throw unsupported(
        `input[${i}].type`,
        `The input item type "${String(type)}" is not supported: send ${ITEM_TYPES.join(', ')} items.`,
      );
    const parsed = INPUT_ITEMS[(type ?? 'message') as keyof typeof INPUT_ITEMS].safeParse(raw);
    if (!parsed.success) {
      const ge = invalidRequest(parsed.error);
      throw new GatewayError(
        'invalid_request',
        `Invalid input[${i}]: ${ge.message.replace(/^Invalid /, '')}`,
        {
          param: `input[${i}]${ge.param ? `.${ge.param}` : ''}`,
        },
      );
    }
    return parsed.data;
  });
}

function contentOf(
  parts: string | ResponsesContentPart[],
  role: string,
  where: string,
): string | ContentPart[] {
  if (typeof parts === 'string') return parts;
  const out: ContentPart[] = [];
  parts.forEach((p, j) => {
    const param = `${where}.content[${j}]`;
    switch (p.type) {
      case 'input_text':
        out.push({ type: 'text', text: p.text });
        break;
      case 'output_text':
        out.push({ type: 'text', text: p.text });
        break;
      case 'refusal':
        out.push({ type: 'text', text: p.refusal });
        break;
      case 'input_image':
        if (role !== 'user')
          throw new GatewayError('invalid_request', `Only user messages may carry images.`, { param });
        if (p.file_id || !p.image_url)
          throw unsupported(
            `${param}.file_id`,
            'Images by file_id are not supported: send image_url (a URL or data: URI).',
          );
        out.push({
          type: 'image_url',
          image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) },
        });
        break;
    }
  });
  if (out.length === 1 && out[0]!.type === 'text') return out[0]!.text;
  return role === 'user' ? out : out.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function outputText(output: string | { type: string; text?: string | undefined }[], param: string): string {
  if (typeof output === 'string') return output;
  return output
    .map((p) => {
      if (p.type !== 'input_text')
        throw unsupported(
          param,
          'function_call_output carries text only: send output as a string or input_text parts.',
        );
      return p.text ?? '';
    })
    .join('');
}

/** The tool calls of a conversation whose results have not been sent yet. */
function pendingCalls(messages: readonly ChatMessage[]): Map<string, string> {
  const pending = new Map<string, string>();
  for (const m of messages) {
    for (const tc of m.tool_calls ?? []) pending.set(tc.id, tc.function.name);
    if (m.role === 'tool' && m.tool_call_id) pending.delete(m.tool_call_id);
  }
  return pending;
}

/** Input items as chat messages; function calls join the assistant message before them. */
export function toMessages(
  items: ResponsesInputItem[],
  history: readonly ChatMessage[],
  names: ToolNames,
): ChatMessage[] {
  const out: ChatMessage[] = [];
  const pending = pendingCalls(history);
  const answered = new Set<string>();
  for (const m of history) if (m.role === 'tool' && m.tool_call_id) answered.add(m.tool_call_id);
  let lastWasAssistant = false;
  items.forEach((item, i) => {
    const where = `input[${i}]`;
    if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const call = callOfItem(item, names) as ToolCall;
      const last = out[out.length - 1];
      if (lastWasAssistant && last?.role === 'assistant')
        last.tool_calls = [...(last.tool_calls ?? []), call];
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
      pending.set(item.call_id, call.function.name);
      lastWasAssistant = true;
      return;
    }
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      if (!pending.has(item.call_id))
        throw new GatewayError(
          'invalid_request',
          answered.has(item.call_id)
            ? `The function call "${item.call_id}" already has an output.`
            : `No function_call with call_id "${item.call_id}" comes before this ${item.type}.`,
          { param: `${where}.call_id` },
        );
      pending.delete(item.call_id);
      answered.add(item.call_id);
      out.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content: outputText(item.output, `${where}.output`),
      });
      lastWasAssistant = false;
      return;
    }
    const role = item.type === 'compaction' ? 'user' : item.role;
    if (role !== 'assistant' && pending.size > 0) {
      const [id] = pending.keys();
      throw new GatewayError(
        'invalid_request',
        `No function_call_output for call_id "${id}": send each function call's output before the next message.`,
        { param: where },
      );
    }
    if (item.type === 'compaction') {
      out.push({
        role: 'user',
        content: compactionMessage(item.encrypted_content, `${where}.encrypted_content`),
      });
      lastWasAssistant = false;
      return;
    }
    const content = contentOf(item.content, item.role, where);
    out.push({ role: item.role, content });
    lastWasAssistant = item.role === 'assistant';
  });
  return out;
}

/** Input items as GET /v1/responses/{id}/input_items lists them. */
export function storedItems(items: ResponsesInputItem[]): StoredItem[] {
  return items.map((item) => {
    if (item.type === 'function_call')
      return { ...item, id: item.id ?? newId('fc'), status: item.status ?? 'completed' };
    if (item.type === 'custom_tool_call')
      return { ...item, id: item.id ?? newId('ctc'), status: item.status ?? 'completed' };
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
      return {
        type: item.type,
        id: item.id ?? newId(item.type === 'function_call_output' ? 'fco' : 'ctco'),
        call_id: item.call_id,
        output: item.output,
        status: item.status ?? 'completed',
      };
    if (item.type === 'compaction')
      return { type: 'compaction', id: item.id ?? newId('cmp'), encrypted_content: item.encrypted_content };
    const content =
      typeof item.content === 'string'
        ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }]
        : item.content;
    return {
      type: 'message',
      id: item.id ?? newId('msg'),
      role: item.role,
      status: item.status ?? 'completed',
      content,
    };
  });
}

function responseFormat(text: ResponsesBody['text']): Record<string, unknown> | undefined {
  if (!text) return undefined;
  if (text.verbosity != null)
    throw unsupported('text.verbosity', 'The parameter "text.verbosity" is not supported by this gateway.');
  const f = text.format;
  if (!f) return undefined;
  if (f.type === 'json_schema')
    return {
      type: 'json_schema',
      json_schema: { name: f.name, schema: f.schema, ...(f.strict != null ? { strict: f.strict } : {}) },
    };
  return { type: f.type };
}

function reasoningEffort(r: ResponsesBody['reasoning']): string | undefined {
  if (!r) return undefined;
  return r.effort ?? undefined;
}

/**
 * A Responses body (after rejectResponsesParams and the schema) as the pipeline's body. `history` is
 * the conversation of previous_response_id; `sessionId` continues its session instead.
 */
export function responsesToNative(
  body: ResponsesBody,
  history: readonly ChatMessage[],
  sessionId: string | undefined,
  hostedTools: HostedToolPolicy = REFUSE_HOSTED,
): ResponsesTurn {
  if (body.truncation === 'auto')
    throw unsupported(
      'truncation',
      'truncation "auto" is not supported: the gateway never drops input items.',
    );
  const { tools: toolList, names, omitted } = responsesTools(body.tools, hostedTools);
  const items = parseItems(body.input);
  const fresh = toMessages(items, history, names);
  const conversation = [...history, ...fresh];
  const pending = pendingCalls(conversation);
  if (pending.size > 0) {
    const [id] = pending.keys();
    throw new GatewayError('invalid_request', `No function_call_output for call_id "${id}".`, {
      param: 'input',
    });
  }
  const messages: ChatMessage[] = [
    ...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []),
    ...(sessionId ? fresh : conversation),
  ];
  const effort = reasoningEffort(body.reasoning);
  const format = responseFormat(body.text);
  const choice = body.tool_choice;
  const native: NativeBody = {
    model: body.model,
    messages: messages as NativeBody['messages'],
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.max_output_tokens != null ? { max_tokens: body.max_output_tokens } : {}),
    ...(toolList?.length ? { tools: toolList } : {}),
    ...(choice != null
      ? {
          tool_choice:
            typeof choice === 'string'
              ? choice
              : { type: 'function', function: { name: names.flat(undefined, choice.name) } },
        }
      : {}),
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(format ? { response_format: format } : {}),
    ...(effort ? { reasoning_effort: effort } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(body.user ? { user: body.user } : {}),
    ...(body.service_tier != null ? { service_tier: body.service_tier } : {}),
    ...(sessionId ? { session_id: sessionId } : {}),
    ...(body.stream ? { stream: true } : {}),
  };
  return { native, items: storedItems(items), conversation, toolNames: names, omittedTools: omitted };
}
