import { z } from 'zod';
import { DEFAULT_MAX_JSON_DEPTH, jsonTooDeep } from '../json/depth.ts';
import { cacheControl } from './cache-control.ts';
import { LIMITS } from './limits.ts';
import { toolName } from './tool-name.ts';

// `cache_control` on a part: a prompt-cache breakpoint (cache-control.ts), as routers for Claude take it.
const textPart = z.object({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const imagePart = z.object({
  cache_control: cacheControl,
  type: z.literal('image_url'),
  image_url: z.object({
    url: z
      .string()
      .min(1)
      .refine(
        (u) => /^(https?:\/\/|data:image\/[a-z0-9.+-]+;base64,)/i.test(u),
        'must be an http(s) URL or a data: URI with base64',
      ),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
});
export const contentPart = z.discriminatedUnion('type', [textPart, imagePart], {
  error: 'content parts must be {type: "text", text} or {type: "image_url", image_url: {url}}',
});

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1),
    // JSON in a string: adapters that need an object (Anthropic, Gemini) parse it, so it is held to
    // the same depth as a body.
    arguments: z
      .string()
      .refine(
        (s) => !jsonTooDeep(s, DEFAULT_MAX_JSON_DEPTH),
        `must not nest more than ${DEFAULT_MAX_JSON_DEPTH} levels deep`,
      ),
  }),
});

export const message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool'], {
    error: 'role must be one of system, developer, user, assistant, tool',
  }),
  content: z.union([z.string(), z.array(contentPart).max(256), z.null()], {
    error: 'content must be a string or an array of content parts',
  }),
  name: z.string().max(256).optional(),
  tool_calls: z.array(toolCall).max(LIMITS.tools).optional(),
  tool_call_id: z.string().max(256).optional(),
});
export type MessageInput = z.infer<typeof message>;

/**
 * A function's parameters: a JSON schema of an object (or no `type`, read as one), which is what
 * every provider requires; anything else would be the provider's refusal reported as an upstream error.
 */
export const isObjectSchema = (v: unknown): v is Record<string, unknown> =>
  !!v &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  ((v as { type?: unknown }).type === undefined || (v as { type?: unknown }).type === 'object');

export const tool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: toolName,
    description: z.string().max(4096).optional(),
    parameters: z
      .record(z.string(), z.unknown())
      .refine(isObjectSchema, 'must be a JSON schema of type "object"')
      .optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

export const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);

export const stop = z.union([z.string().min(1), z.array(z.string().min(1)).max(LIMITS.stopSequences)]);

export const sampling = {
  temperature: z
    .number()
    .min(0, 'temperature must be between 0 and 2')
    .max(2, 'temperature must be between 0 and 2')
    .optional(),
  max_tokens: z.number().int().min(1).max(LIMITS.maxTokens).optional(),
  top_p: z.number().min(0).max(1).optional(),
  stop: stop.optional(),
};

export const freeForm = z.record(z.string(), z.unknown());

/**
 * A speech voice: a built-in voice's name, or OpenAI's custom voice as `{ "id": "voice_…" }`, which
 * the official SDKs send as such. Both go to the provider as sent.
 */
export const voice = z.union([z.string().min(1).max(64), z.strictObject({ id: z.string().min(1).max(64) })], {
  error: (issue) =>
    issue.input === undefined
      ? 'voice is required'
      : 'voice must be a voice name (1-64 characters) or a custom voice {"id": "voice_..."}',
});
export const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID');
