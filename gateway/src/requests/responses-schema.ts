import { z } from 'zod';
import { freeForm } from './common-schema.ts';
import { LIMITS } from './limits.ts';
import { toolName } from './tool-name.ts';

/**
 * The body of POST /v1/responses. Every key of this schema is either mapped into the pipeline's body
 * (responses-translate.ts lists which) or refused when it asks for something (RESPONSES_REFUSED);
 * any other key is refused too, so nothing a client sends is silently dropped.
 */

const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const inputImage = z.object({
  type: z.literal('input_image'),
  image_url: z
    .string()
    .min(1)
    .refine(
      (u) => /^(https?:\/\/|data:image\/[a-z0-9.+-]+;base64,)/i.test(u),
      'must be an http(s) URL or a data: URI with base64',
    )
    .nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(['auto', 'low', 'high']).nullish(),
});
/** Assistant turns sent back as input carry the output parts they were answered with. */
const outputText = z.object({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()).optional(),
  logprobs: z.array(z.unknown()).optional(),
});
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });

const contentPart = z.discriminatedUnion('type', [inputText, inputImage, outputText, refusalPart], {
  error: 'content parts must be input_text, input_image, output_text or refusal',
});
export type ResponsesContentPart = z.infer<typeof contentPart>;

const messageItem = z.object({
  type: z.literal('message').optional(),
  id: z.string().optional(),
  status: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer'], {
    error: 'role must be one of user, assistant, system, developer',
  }),
  content: z.union([z.string(), z.array(contentPart).max(256)], {
    error: 'content must be a string or an array of content parts',
  }),
});

const functionCallItem = z.object({
  type: z.literal('function_call'),
  id: z.string().optional(),
  status: z.string().optional(),
  call_id: z.string().min(1).max(256),
  namespace: z.string().min(1).max(128).optional(),
  name: z.string().min(1).max(128),
  arguments: z.string(),
});

const customToolCallItem = z.object({
  type: z.literal('custom_tool_call'),
  id: z.string().optional(),
  status: z.string().optional(),
  call_id: z.string().min(1).max(256),
  namespace: z.string().min(1).max(128).optional(),
  name: z.string().min(1).max(128),
  input: z.string(),
});

const functionCallOutputItem = z.object({
  type: z.literal('function_call_output'),
  id: z.string().nullish(),
  status: z.string().nullish(),
  call_id: z.string().min(1).max(256),
  output: z.union([z.string(), z.array(z.union([inputText, inputImage]))]),
});

const customToolCallOutputItem = functionCallOutputItem.extend({
  type: z.literal('custom_tool_call_output'),
});

/** The item POST /v1/responses/compact returns, sent back as input: its summary replaces the turns it compacted. */
const compactionItem = z.object({
  type: z.literal('compaction'),
  id: z.string().max(256).nullish(),
  encrypted_content: z.string().min(1).max(20_971_520),
});

export const ITEM_TYPES = [
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'compaction',
] as const;

/** The schema of each input item type; items are checked one by one so errors name their place. */
export const INPUT_ITEMS = {
  message: messageItem,
  function_call: functionCallItem,
  function_call_output: functionCallOutputItem,
  custom_tool_call: customToolCallItem,
  custom_tool_call_output: customToolCallOutputItem,
  compaction: compactionItem,
} as const;
export const inputItem = z.union([
  messageItem,
  functionCallItem,
  functionCallOutputItem,
  customToolCallItem,
  customToolCallOutputItem,
  compactionItem,
]);
export type ResponsesInputItem = z.infer<typeof inputItem>;

const functionTool = z.object({
  type: z.literal('function'),
  name: toolName,
  description: z.string().max(16_384).nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});
export type ResponsesFunctionTool = z.infer<typeof functionTool>;

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.enum(['function', 'custom']), name: z.string().min(1) }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    name: z.string().min(1).max(64),
    schema: z.record(z.string(), z.unknown()),
    description: z.string().nullish(),
    strict: z.boolean().nullish(),
  }),
]);

/** Parameters the surface refuses when they ask for something (any value but absent, null or false). */
export const RESPONSES_REFUSED = [
  'access_programs',
  'context_management',
  'image',
  'max_tool_calls',
  'moderation',
  'prompt',
  'prompt_cache_options',
  'prompt_cache_retention',
  'safety_identifier',
  'top_logprobs',
  'stream_options',
] as const;

const refused = Object.fromEntries(RESPONSES_REFUSED.map((name) => [name, z.unknown().optional()])) as {
  [K in (typeof RESPONSES_REFUSED)[number]]: z.ZodOptional<z.ZodUnknown>;
};

export const responsesBody = z.object({
  model: z.string({ error: 'model is required: send the workflow name' }).min(1).max(200),
  input: z.union([z.string(), z.array(z.unknown()).max(LIMITS.messages)], {
    error: 'input must be a string or an array of input items',
  }),
  instructions: z.string().nullish(),
  tools: z.array(z.unknown()).max(LIMITS.tools).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: z.object({ format: textFormat.nullish(), verbosity: z.string().nullish() }).nullish(),
  temperature: z
    .number()
    .min(0, 'temperature must be between 0 and 2')
    .max(2, 'temperature must be between 0 and 2')
    .nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_output_tokens: z.number().int().min(1).max(LIMITS.maxTokens).nullish(),
  reasoning: z
    .object({
      effort: z.string().min(1).max(32).nullish(),
      summary: z.enum(['auto', 'concise', 'detailed', 'none']).nullish(),
      generate_summary: z.enum(['auto', 'concise', 'detailed', 'none']).nullish(),
    })
    .nullish(),
  metadata: z.record(z.string().max(64), z.string().max(512)).nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().min(1).max(256).nullish(),
  /** A conversation of the Conversations API: its items are the input's prefix, and the turn is appended. */
  conversation: z
    .union([z.string().min(1).max(256), z.object({ id: z.string().min(1).max(256) })], {
      error: 'conversation must be a conversation id or an object with its id',
    })
    .nullish(),
  stream: z.boolean().nullish(),
  /** Run as a job: answered at once with the queued response, polled, cancellable (gateway/src/background). */
  background: z.boolean().nullish(),
  user: z.string().max(256).nullish(),
  service_tier: z.string().min(1).max(32).nullish(),
  truncation: z.enum(['auto', 'disabled']).nullish(),
  // Hints that do not change the answer (responses-translate.ts RESPONSES_HINTS says why each).
  include: z.array(z.string().max(128)).max(32).nullish(),
  prompt_cache_key: z.string().max(1024).nullish(),
  client_metadata: freeForm.nullish(),
  ...refused,
});
export type ResponsesBody = z.infer<typeof responsesBody>;

/** Query of GET /v1/responses/{id}/input_items. */
export const inputItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().max(256).optional(),
  before: z.string().max(256).optional(),
  include: z.unknown().optional(),
});

export const responseIdParams = z.object({ id: z.string().min(1).max(256) });

export { freeForm };
