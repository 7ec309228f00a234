import { z } from 'zod';
import { responsesBody } from './responses-schema.ts';

/** Bodies, queries and path parameters of the Conversations API and of POST /v1/responses/input_tokens. */

/** OpenAI's metadata: at most 16 pairs, keys up to 64 characters, values up to 512. */
export const metadata = z
  .record(z.string().max(64, 'metadata keys are at most 64 characters'), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, 'metadata holds at most 16 pairs');

/** At most 20 items go in one request, as OpenAI allows. */
const items = z.array(z.unknown(), { error: 'items must be an array of items' }).max(20);

export const createConversationBody = z.object({
  items: items.nullish(),
  metadata: metadata.nullish(),
});

export const updateConversationBody = z.object({
  metadata: z.union([metadata, z.null()], {
    error: 'metadata is required: an object of string pairs, or null',
  }),
});

export const createItemsBody = z.object({ items: items.min(1, 'items must not be empty') });

/** `include` asks for fields of item types a conversation here never holds: accepted, changing nothing. */
const include = z.union([z.string().max(128), z.array(z.string().max(128)).max(32)]).optional();

export const listItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  after: z.string().max(256).optional(),
  include,
});

export const includeQuery = z.object({ include });

export const conversationParams = z.object({ conversation_id: z.string().min(1).max(256) });
export const itemParams = z.object({
  conversation_id: z.string().min(1).max(256),
  item_id: z.string().min(1).max(256),
});

/** The body of POST /v1/responses/input_tokens: the parameters of a request that shape its input. */
export const inputTokensBody = responsesBody
  .pick({
    model: true,
    instructions: true,
    tools: true,
    tool_choice: true,
    parallel_tool_calls: true,
    text: true,
    reasoning: true,
    previous_response_id: true,
    conversation: true,
    truncation: true,
  })
  .extend({ input: responsesBody.shape.input.nullish() });
export type InputTokensBody = z.infer<typeof inputTokensBody>;
