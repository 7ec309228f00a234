import { z } from 'zod';
import { cacheControl } from './cache-control.ts';
import { LIMITS } from './limits.ts';
import { toolName } from './tool-name.ts';

/**
 * The body of POST /v1/messages (Anthropic's Messages API). Every key is mapped into the pipeline's
 * body (messages-translate.ts lists which) or refused when it asks for something (MESSAGES_REFUSED);
 * any other key is refused too. Content blocks are checked one by one in the translator, so an
 * unknown block type is named with its place.
 */

export const textBlock = z.object({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControl,
  citations: z.array(z.unknown()).nullish(),
});

const imageBlock = z.object({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.object({
      type: z.literal('base64'),
      media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
      data: z.string().min(1),
    }),
    z.object({ type: z.literal('url'), url: z.string().regex(/^https?:\/\//, 'must be an http(s) URL') }),
  ]),
  cache_control: cacheControl,
});

const toolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1).max(256),
  name: z.string().min(1).max(128),
  input: z.unknown(),
  cache_control: cacheControl,
});

/** A deferred tool a tool search found (Claude's tool search): Claude loads its definition. */
const toolReferenceBlock = z.object({ type: z.literal('tool_reference'), tool_name: toolName });

const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1).max(256),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion('type', [textBlock, imageBlock, toolReferenceBlock]))])
    .optional(),
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});

/** Claude's reasoning, sent back in assistant turns: Claude checks the signature; others never see it. */
const thinkingBlock = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().min(1),
});
const redactedThinkingBlock = z.object({ type: z.literal('redacted_thinking'), data: z.string().min(1) });

export const BLOCK_TYPES = [
  'text',
  'image',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
] as const;
export const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
]);
export type ContentBlock = z.infer<typeof contentBlock>;

export const messageParam = z.object({
  // `system` turns mid-conversation: Claude Code sends them (its mid-conversation-system beta).
  role: z.enum(['user', 'assistant', 'system'], { error: 'role must be user, assistant or system' }),
  content: z.union([z.string(), z.array(z.unknown()).max(1024)], {
    error: 'content must be a string or an array of content blocks',
  }),
});

const customTool = z.object({
  type: z.literal('custom').optional(),
  name: toolName,
  description: z.string().max(16_384).optional(),
  input_schema: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
export type CustomTool = z.infer<typeof customTool>;

export const toolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.object({
    type: z.literal('tool'),
    name: z.string().min(1),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
  z.object({ type: z.literal('none') }),
]);

const thinking = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('enabled'),
    budget_tokens: z.number().int().min(1024),
    display: z.string().nullish(),
  }),
  z.object({ type: z.literal('adaptive'), display: z.string().nullish() }),
  z.object({ type: z.literal('disabled') }),
]);

/** Claude's effort knob; `high` is its default. */
const outputConfig = z.object({
  effort: z.enum(['low', 'medium', 'high', 'max']).nullish(),
});

/** Context editing: only clearing thinking blocks, which the gateway never carries, is accepted. */
const contextManagement = z.object({
  edits: z
    .array(
      z
        .object({ type: z.string().regex(/^clear_thinking_/, 'only clear_thinking edits are supported') })
        .loose(),
    )
    .max(16)
    .optional(),
});

/** Parameters the surface refuses when they ask for something (any value but absent, null or false). */
export const MESSAGES_REFUSED = ['container', 'mcp_servers'] as const;

const refused = Object.fromEntries(MESSAGES_REFUSED.map((name) => [name, z.unknown().optional()])) as {
  [K in (typeof MESSAGES_REFUSED)[number]]: z.ZodOptional<z.ZodUnknown>;
};

const common = {
  model: z.string({ error: 'model is required: send the workflow name' }).min(1).max(200),
  messages: z
    .array(messageParam, { error: 'messages is required' })
    .min(1, 'messages must not be empty')
    .max(LIMITS.messages),
  system: z.union([z.string(), z.array(textBlock).max(64)]).optional(),
  tools: z.array(z.unknown()).max(LIMITS.tools).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
  output_config: outputConfig.optional(),
  context_management: contextManagement.nullish(),
};

export const messagesBody = z.object({
  ...common,
  max_tokens: z.number({ error: 'max_tokens is required' }).int().min(1).max(LIMITS.maxTokens),
  temperature: z
    .number()
    .min(0, 'temperature must be between 0 and 1')
    .max(1, 'temperature must be between 0 and 1')
    .optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(1).max(1000).optional(),
  stop_sequences: z.array(z.string().min(1)).max(16).optional(),
  stream: z.boolean().optional(),
  metadata: z.object({ user_id: z.string().max(256).nullish() }).optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
  ...refused,
});
export type MessagesBody = z.infer<typeof messagesBody>;

/** POST /v1/messages/count_tokens takes the prompt half of a messages body. */
export const countTokensBody = z.object(common);
export type CountTokensBody = z.infer<typeof countTokensBody>;
