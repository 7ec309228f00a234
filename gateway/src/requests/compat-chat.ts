import { type CompatChatBody, compatChatBody, UNSUPPORTED_CHAT_PARAMS } from './compat-schema.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refuseParams } from './param-rules.ts';

export { UNSUPPORTED_CHAT_PARAMS };

/**
 * Every other parameter of compatChatBody: carried into the native body by compatChatToNative
 * (each provider's translator then passes, renames or refuses it), or read by the surface itself
 * (`stream_options.include_usage`, `n` of 1). test/gateway/compat/params.test.ts fails when a key of
 * the schema is in neither list.
 */
export const MAPPED_CHAT_PARAMS = [
  'model',
  'messages',
  'temperature',
  'max_tokens',
  'max_completion_tokens',
  'top_p',
  'stop',
  'stream',
  'stream_options',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'n',
  'response_format',
  'session_id',
  'metadata',
  'user',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'reasoning_effort',
  'service_tier',
  'store',
] as const;

const CHAT_PARAMS = paramRules(
  compatChatBody.shape,
  Object.fromEntries(UNSUPPORTED_CHAT_PARAMS.map((name) => [name, []])),
  { single: ['n'], fields: { stream_options: { known: ['include_usage'] } } },
);

/**
 * Refuses, before schema validation names anything else, the parameters the gateway cannot honour:
 * the refused list, n above 1, and any parameter the schema does not know (it would otherwise be
 * stripped, i.e. silently dropped). null means "not set", as OpenAI reads it.
 */
export function rejectUnsupported(raw: unknown): void {
  refuseParams(raw, CHAT_PARAMS);
}

/** A compatible chat body in the native vocabulary: the one place compatible parameters are mapped. */
export function compatChatToNative(body: CompatChatBody): NativeBody {
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  return {
    model: body.model,
    messages: body.messages,
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(maxTokens != null ? { max_tokens: maxTokens } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.stop != null ? { stop: body.stop } : {}),
    ...(body.tools ? { tools: body.tools } : {}),
    ...(body.tool_choice !== undefined ? { tool_choice: body.tool_choice } : {}),
    ...(body.parallel_tool_calls != null ? { parallel_tool_calls: body.parallel_tool_calls } : {}),
    ...(body.response_format ? { response_format: body.response_format } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(body.user ? { user: body.user } : {}),
    ...(body.session_id ? { session_id: body.session_id } : {}),
    ...(body.seed != null ? { seed: body.seed } : {}),
    ...(body.presence_penalty != null ? { presence_penalty: body.presence_penalty } : {}),
    ...(body.frequency_penalty != null ? { frequency_penalty: body.frequency_penalty } : {}),
    ...(body.logit_bias != null ? { logit_bias: body.logit_bias } : {}),
    ...(body.reasoning_effort != null ? { reasoning_effort: body.reasoning_effort } : {}),
    ...(body.service_tier != null ? { service_tier: body.service_tier } : {}),
    ...(body.store != null ? { store: body.store } : {}),
    ...(body.stream ? { stream: true } : {}),
  };
}
