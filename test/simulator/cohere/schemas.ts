/** zod schemas of the documented Cohere API v2 request bodies (POST /v2/chat, /v2/embed). */
import { z } from 'zod';

const contentPart = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string() }) }),
  z.looseObject({ type: z.literal('document'), document: z.looseObject({}) }),
]);
const content = z.union([z.string(), z.array(contentPart)]);

const toolCall = z.looseObject({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

export const cohereMessage = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content }),
  z.looseObject({ role: z.literal('user'), content }),
  z.looseObject({
    role: z.literal('assistant'),
    content: content.optional(),
    tool_plan: z.string().optional(),
    tool_calls: z.array(toolCall).optional(),
  }),
  z.looseObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content }),
]);
export type CohereMessage = z.infer<typeof cohereMessage>;

export const chatRequest = z.strictObject({
  model: z.string().min(1),
  messages: z.array(cohereMessage).min(1),
  stream: z.boolean().optional(),
  tools: z
    .array(
      z.looseObject({
        type: z.literal('function'),
        function: z.looseObject({
          name: z.string(),
          description: z.string().optional(),
          parameters: z.record(z.string(), z.unknown()),
        }),
      }),
    )
    .optional(),
  tool_choice: z.enum(['REQUIRED', 'NONE']).optional(),
  strict_tools: z.boolean().optional(),
  documents: z.array(z.unknown()).optional(),
  citation_options: z.looseObject({}).optional(),
  response_format: z
    .union([
      z.looseObject({ type: z.literal('text') }),
      z.looseObject({
        type: z.literal('json_object'),
        json_schema: z.record(z.string(), z.unknown()).optional(),
      }),
    ])
    .optional(),
  safety_mode: z.enum(['CONTEXTUAL', 'STRICT', 'OFF']).optional(),
  max_tokens: z.number().int().min(1).optional(),
  stop_sequences: z.array(z.string()).max(5).optional(),
  temperature: z.number().min(0).max(1).optional(),
  seed: z.number().int().optional(),
  frequency_penalty: z.number().min(0).max(1).optional(),
  presence_penalty: z.number().min(0).max(1).optional(),
  k: z.number().int().min(0).max(500).optional(),
  p: z.number().min(0.01).max(0.99).optional(),
  logprobs: z.boolean().optional(),
  thinking: z.looseObject({ type: z.enum(['enabled', 'disabled']) }).optional(),
});
export type ChatRequest = z.infer<typeof chatRequest>;

export const embedRequest = z.strictObject({
  model: z.string().min(1),
  texts: z.array(z.string()).min(1).max(96),
  input_type: z.enum(['search_document', 'search_query', 'classification', 'clustering', 'image']),
  embedding_types: z.array(z.enum(['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64'])).optional(),
  output_dimension: z.union([z.literal(256), z.literal(512), z.literal(1024), z.literal(1536)]).optional(),
  truncate: z.enum(['NONE', 'START', 'END']).optional(),
  max_tokens: z.number().int().optional(),
});
