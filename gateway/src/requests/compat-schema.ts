import { z } from 'zod';
import { freeForm, message, sampling, tool, toolChoice, voice } from './common-schema.ts';
import { LIMITS } from './limits.ts';
import { chatControls } from './native-schema.ts';

/** The controls of OpenAI's legacy Completions API: the chat-only ones are not among them. */
const completionControls = {
  seed: chatControls.seed,
  presence_penalty: chatControls.presence_penalty,
  frequency_penalty: chatControls.frequency_penalty,
  logit_bias: chatControls.logit_bias,
};

/**
 * OpenAI chat parameters the compatible surface refuses with unsupported_parameter (docs/api.md, "Compatible parameters") when
 * they ask for something (any value but absent, null or false). They are in the schema below so
 * that it names every parameter the surface knows; compat-chat.ts refuses any other.
 */
export const UNSUPPORTED_CHAT_PARAMS = [
  'functions',
  'function_call',
  'logprobs',
  'top_logprobs',
  'modalities',
  'audio',
  'prediction',
  'web_search_options',
  'verbosity',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
] as const;

/** Schema entries for refused parameters: named, so that they are known, and checked by param-rules.ts. */
function refusedShape<const N extends string>(
  names: readonly N[],
): { [K in N]: z.ZodOptional<z.ZodUnknown> } {
  return Object.fromEntries(names.map((name) => [name, z.unknown().optional()])) as {
    [K in N]: z.ZodOptional<z.ZodUnknown>;
  };
}

const model = z.string({ error: 'model is required: send the workflow name' }).min(1).max(200);

/** OpenAI's API reads null as "not set" for these, and clients send it so: the same here. */
const compatSampling = {
  temperature: sampling.temperature.nullable(),
  max_tokens: sampling.max_tokens.nullable(),
  top_p: sampling.top_p.nullable(),
  stop: sampling.stop.nullable(),
};

export const compatChatBody = z.object({
  model,
  messages: z
    .array(message, { error: 'messages is required' })
    .min(1, 'messages must not be empty')
    .max(LIMITS.messages),
  ...compatSampling,
  ...chatControls,
  max_completion_tokens: z.number().int().min(1).max(LIMITS.maxTokens).nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
  tools: z.array(tool).max(LIMITS.tools).optional(),
  tool_choice: toolChoice.optional(),
  n: z.number().int().min(1).nullable().optional(),
  response_format: freeForm.optional(),
  // Checked by the session stage: a malformed id names no session (422 session_not_found), not a 400.
  session_id: z.string().max(256).optional(),
  metadata: freeForm.optional(),
  user: z.string().max(256).optional(),
  ...refusedShape(UNSUPPORTED_CHAT_PARAMS),
});
export type CompatChatBody = z.infer<typeof compatChatBody>;

/** Legacy Completions parameters the surface refuses with unsupported_parameter when they ask for something. */
export const UNSUPPORTED_COMPLETION_PARAMS = ['suffix', 'echo', 'logprobs'] as const;

/**
 * POST /v1/completions. A prompt is one string (or an array holding one string): token-id prompts
 * and several prompts are refused by compat-completion.ts before this schema reads them.
 */
export const compatCompletionBody = z.object({
  model,
  prompt: z.union([z.string().min(1), z.tuple([z.string().min(1)])], {
    error: 'prompt is required: a non-empty string',
  }),
  ...compatSampling,
  ...completionControls,
  stream: z.boolean().nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
  n: z.number().int().min(1).nullable().optional(),
  best_of: z.number().int().min(1).max(20).nullable().optional(),
  user: z.string().max(256).optional(),
  ...refusedShape(UNSUPPORTED_COMPLETION_PARAMS),
});
export type CompatCompletionBody = z.infer<typeof compatCompletionBody>;

export const compatEmbeddingBody = z.object({
  model,
  input: z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(LIMITS.embeddingInputs)], {
    error: 'input must be a string or an array of strings',
  }),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: z.number().int().min(1).max(65536).optional(),
  user: z.string().max(256).optional(),
});

/** Image parameters of OpenAI's API that the gateway sends to no provider: refused when set. */
export const UNSUPPORTED_IMAGE_PARAMS = [
  'background',
  'moderation',
  'output_format',
  'output_compression',
  'partial_images',
  'stream',
  'complexity',
  'frame_count',
  'frame_duration_ms',
  'safety_identifier',
  'svg',
] as const;

export const compatImageBody = z.object({
  model,
  prompt: z.string({ error: 'prompt is required' }).min(1).max(32000),
  n: z.number().int().min(1).max(LIMITS.images).optional(),
  // `auto` (OpenAI's default for its newer image models) leaves the size to the provider.
  size: z
    .union([
      z.literal('auto'),
      z.string().regex(/^\d{2,5}x\d{2,5}$/, 'size must be auto or look like 1024x1024'),
    ])
    .optional(),
  quality: z.string().max(32).optional(),
  style: z.string().max(32).optional(),
  response_format: z.enum(['url', 'b64_json']).optional(),
  user: z.string().max(256).optional(),
  ...refusedShape(UNSUPPORTED_IMAGE_PARAMS),
});

/** Speech parameters the gateway sends to no provider: refused when set. */
export const UNSUPPORTED_SPEECH_PARAMS = ['instructions', 'stream_format'] as const;

export const compatSpeechBody = z.object({
  model,
  input: z.string({ error: 'input is required' }).min(1).max(4096),
  voice,
  response_format: z.enum(['mp3', 'wav', 'opus', 'aac', 'flac', 'pcm']).optional(),
  speed: z.number().min(0.25).max(4).optional(),
  ...refusedShape(UNSUPPORTED_SPEECH_PARAMS),
});
