import type { ChatResult, ToolCall, Usage } from '../providers/types.ts';
import type { ResponsesBody } from '../requests/responses-schema.ts';
import { customInput, ToolNames } from '../requests/responses-tools.ts';
import { newId } from '../requests/responses-translate.ts';

/** What a response object echoes of its request, fixed when the request is parsed. */
export interface ResponseEcho {
  id: string;
  createdAt: number;
  /** The workflow name. */
  model: string;
  body: ResponsesBody;
  /** The client's tools behind the provider-facing names its calls come back with. */
  toolNames?: ToolNames | undefined;
}

export type OutputItem = Record<string, unknown> & { id: string; type: string };

export const messageItem = (id: string, text: string, status: 'in_progress' | 'completed'): OutputItem => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
});

/**
 * A provider's tool call as the item the client's tool asks for: a custom_tool_call with its `input`
 * for a custom tool, a function_call otherwise; either with the `namespace` of a namespaced tool.
 */
export function toolCallItem(
  call: { id: string; name: string; arguments: string },
  status: 'in_progress' | 'completed',
  names: ToolNames = new ToolNames(),
): OutputItem {
  const ref = names.ref(call.name);
  const ns = ref.namespace ? { namespace: ref.namespace } : {};
  if (ref.custom)
    return {
      id: newId('ctc'),
      type: 'custom_tool_call',
      status,
      call_id: call.id,
      ...ns,
      name: ref.name,
      input: customInput(call.arguments),
    };
  return {
    id: newId('fc'),
    type: 'function_call',
    status,
    call_id: call.id,
    ...ns,
    name: ref.name,
    arguments: call.arguments,
  };
}

/** The output items of a chat result: the text as one message, then each tool call's item. */
export function outputItems(
  content: string | null,
  toolCalls: ToolCall[] | undefined,
  names?: ToolNames,
): OutputItem[] {
  const out: OutputItem[] = [];
  if (content) out.push(messageItem(newId('msg'), content, 'completed'));
  for (const tc of toolCalls ?? [])
    out.push(
      toolCallItem(
        { id: tc.id, name: tc.function.name, arguments: tc.function.arguments },
        'completed',
        names,
      ),
    );
  return out;
}

/**
 * The spec's usage object, every detail present (typed clients require each). Without usage (a
 * response still in progress, one that failed) the field is left out: the spec allows its absence,
 * not null.
 */
export const responsesUsage = (u: Usage | undefined): Record<string, unknown> | undefined =>
  u
    ? {
        input_tokens: u.prompt_tokens,
        input_tokens_details: {
          cached_tokens: u.cache_read_tokens ?? 0,
          cache_write_tokens: u.cache_write_tokens ?? 0,
        },
        output_tokens: u.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.total_tokens,
      }
    : undefined;

const INCOMPLETE: Record<string, string> = { length: 'max_output_tokens', content_filter: 'content_filter' };

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

/** The Response object, in OpenAI's shape, for any state of the response. */
export function responseObject(
  echo: ResponseEcho,
  state: {
    status: ResponseStatus;
    output: OutputItem[];
    usage?: Usage | undefined;
    finishReason?: string | undefined;
    error?: { code: string; message: string } | undefined;
  },
): Record<string, unknown> {
  const b = echo.body;
  const incomplete = state.status === 'incomplete' ? INCOMPLETE[state.finishReason ?? ''] : undefined;
  const tools = (b.tools ?? []) as Record<string, unknown>[];
  return {
    id: echo.id,
    object: 'response',
    created_at: echo.createdAt,
    status: state.status,
    background: b.background === true,
    error: state.error ?? null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    max_tool_calls: null,
    model: echo.model,
    output: state.output,
    parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null,
    ...(b.conversation
      ? { conversation: { id: typeof b.conversation === 'string' ? b.conversation : b.conversation.id } }
      : {}),
    reasoning: { effort: b.reasoning?.effort ?? null, summary: null },
    service_tier: b.service_tier ?? 'default',
    store: b.store ?? true,
    temperature: b.temperature ?? 1,
    text: { format: b.text?.format ?? { type: 'text' }, verbosity: 'medium' },
    tool_choice: b.tool_choice ?? 'auto',
    tools: tools.map((t) => ({ strict: true, ...t })),
    top_p: b.top_p ?? 1,
    truncation: b.truncation ?? 'disabled',
    // Absent rather than null where the spec types the field as an object or a string.
    usage:
      state.status === 'in_progress' || state.status === 'queued' ? undefined : responsesUsage(state.usage),
    user: b.user ?? undefined,
    metadata: b.metadata ?? {},
  };
}

/** The status a finished chat result gives its response. */
export const finishedStatus = (finishReason: string): ResponseStatus =>
  INCOMPLETE[finishReason] ? 'incomplete' : 'completed';

/** The response object of a non-streamed answer. */
export function answeredResponse(echo: ResponseEcho, result: ChatResult): Record<string, unknown> {
  return responseObject(echo, {
    status: finishedStatus(result.finish_reason),
    output: outputItems(result.content, result.tool_calls, echo.toolNames),
    usage: result.usage,
    finishReason: result.finish_reason,
  });
}
