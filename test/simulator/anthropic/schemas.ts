/** zod schemas of the documented Anthropic Messages API request body (POST /v1/messages). */
import { z } from 'zod';

const cacheControl = z
  .looseObject({ type: z.literal('ephemeral'), ttl: z.string().optional() })
  .nullable()
  .optional();

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const imageSource = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('base64'),
    media_type: z.enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
    data: z.string(),
  }),
  z.looseObject({ type: z.literal('url'), url: z.string() }),
  z.looseObject({ type: z.literal('file'), file_id: z.string() }),
]);
const imageBlock = z.looseObject({
  type: z.literal('image'),
  source: imageSource,
  cache_control: cacheControl,
});
const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: z.looseObject({ type: z.string() }),
  cache_control: cacheControl,
});
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z
    .union([
      z.string(),
      z.array(
        z.discriminatedUnion('type', [
          textBlock,
          imageBlock,
          documentBlock,
          // A deferred tool a tool search found (the advanced-tool-use beta, checked in messages.ts).
          z.looseObject({ type: z.literal('tool_reference'), tool_name: z.string() }),
        ]),
      ),
    ])
    .optional(),
  is_error: z.boolean().optional(),
  cache_control: cacheControl,
});
const thinkingBlock = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});
const redactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

const contentBlock = z.discriminatedUnion('type', [
  textBlock,
  imageBlock,
  documentBlock,
  toolUseBlock,
  toolResultBlock,
  thinkingBlock,
  redactedThinkingBlock,
]);

/** `system` turns need a mid-conversation beta (checked in messages.ts). */
const message = z.looseObject({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(contentBlock)]),
});

const customTool = z.looseObject({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/, 'String should match pattern ^[a-zA-Z0-9_-]{1,128}$'),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal('object') }),
  type: z.literal('custom').optional(),
  cache_control: cacheControl,
  /** Tool search: kept out of the context until found (the advanced-tool-use beta). */
  defer_loading: z.boolean().optional(),
});
/** Server tools (web search, code execution, ...) are versioned types; only their shape is checked. */
const serverTool = z.looseObject({ type: z.string().regex(/_\d{8}$/), name: z.string() });

const toolChoice = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('any'), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal('none') }),
  z.looseObject({
    type: z.literal('tool'),
    name: z.string(),
    disable_parallel_tool_use: z.boolean().optional(),
  }),
]);

export const messagesRequest = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().min(1),
  messages: z.array(message),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(z.union([customTool, serverTool])).optional(),
  tool_choice: toolChoice.optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
  metadata: z.looseObject({ user_id: z.string().nullable().optional() }).optional(),
  thinking: z
    .discriminatedUnion('type', [
      z.looseObject({
        type: z.literal('enabled'),
        budget_tokens: z.number().int().min(1024),
        display: z.enum(['summarized', 'omitted']).optional(),
      }),
      z.looseObject({ type: z.literal('adaptive'), display: z.enum(['summarized', 'omitted']).optional() }),
      z.looseObject({ type: z.literal('disabled') }),
    ])
    .optional(),
  output_config: z.looseObject({ effort: z.enum(['low', 'medium', 'high', 'max']).optional() }).optional(),
  /** Needs the context-management beta (checked in messages.ts). */
  context_management: z
    .looseObject({ edits: z.array(z.looseObject({ type: z.string() })).optional() })
    .optional(),
  service_tier: z.enum(['auto', 'standard_only']).optional(),
});
export type MessagesRequest = z.infer<typeof messagesRequest>;
export type AnthropicMessage = z.infer<typeof message>;
