import type { ChatResult, ToolCall, Usage } from '../providers/types.ts';
import type { ResponsesBody } from '../requests/responses-schema.ts';
import { newId } from '../requests/responses-translate.ts';

/** What a response object echoes of its request, fixed when the request is parsed. */
export interface ResponseEcho {
  id: string;
  createdAt: number;
  /** The workflow name. */
  model: string;
  body: ResponsesBody;
}

export type OutputItem = Record<string, unknown> & { id: string; type: string };

export const messageItem = (id: string, text: string, status: 'in_progress' | 'completed'): OutputItem => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
});

export const functionCallItem = (
  id: string,
  call: { id: string; name: string; arguments: string },
  status: 'in_progress' | 'completed',
): OutputItem => ({
  id,
  type: 'function_call',
  status,
  call_id: call.id,
  name: call.name,
  arguments: call.arguments,
});

/** The output items of a chat result: the text as one message, each tool call as a function_call. */
export function outputItems(content: string | null, toolCalls: ToolCall[] | undefined): OutputItem[] {
  const out: OutputItem[] = [];
  if (content) out.push(messageItem(newId('msg'), content, 'completed'));
  for (const tc of toolCalls ?? [])
    out.push(
      functionCallItem(
        newId('fc'),
        { id: tc.id, name: tc.function.name, arguments: tc.function.arguments },
        'completed',
      ),
    );
  return out;
}

export const responsesUsage = (u: Usage | undefined): Record<string, unknown> | null =>
  u
    ? {
        input_tokens: u.prompt_tokens,
        input_tokens_details: { cached_tokens: u.cache_read_tokens ?? 0 },
        output_tokens: u.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: u.total_tokens,
      }
    : null;

const INCOMPLETE: Record<string, string> = { length: 'max_output_tokens', content_filter: 'content_filter' };

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

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
    background: false,
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
    usage: state.status === 'in_progress' ? null : responsesUsage(state.usage),
    user: b.user ?? null,
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
    output: outputItems(result.content, result.tool_calls),
    usage: result.usage,
    finishReason: result.finish_reason,
  });
}
