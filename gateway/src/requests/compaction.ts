import type { z } from 'zod';
import { randomHex } from '../domain/ids.ts';
import { GatewayError } from '../errors/index.ts';
import type { ChatMessage } from '../providers/types.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refusedWhenSet } from './param-rules.ts';
import { responsesBody } from './responses-schema.ts';

const newId = (prefix: string): string => `${prefix}_${randomHex(20)}`;

/**
 * The `encrypted_content` of a compaction item (POST /v1/responses/compact): the summary, encoded
 * (base64url JSON behind a version prefix), not encrypted. The client holds its own conversation, so
 * the summary of it is no secret from it; the encoding only keeps the field opaque, as the API has it.
 */
const PREFIX = 'sy1.';

/** How a compaction item reads to the model when it is sent back as input. */
export const COMPACTION_LEAD = 'Summary of the conversation so far (it replaces the earlier turns):\n';

export const encodeCompaction = (summary: string): string =>
  `${PREFIX}${Buffer.from(JSON.stringify({ summary }), 'utf8').toString('base64url')}`;

/** The user message a compaction item stands for; content this gateway did not produce is a 400 naming `param`. */
export function compactionMessage(content: string, param: string): string {
  const bad = () =>
    new GatewayError(
      'invalid_request',
      'This compaction item was not produced by this gateway (POST /v1/responses/compact): its encrypted_content cannot be read.',
      { param },
    );
  if (!content.startsWith(PREFIX)) throw bad();
  let summary: unknown;
  try {
    summary = (
      JSON.parse(Buffer.from(content.slice(PREFIX.length), 'base64url').toString('utf8')) as {
        summary?: unknown;
      }
    ).summary;
  } catch {
    throw bad();
  }
  if (typeof summary !== 'string') throw bad();
  return `${COMPACTION_LEAD}${summary}`;
}

/** The body of POST /v1/responses/compact: what shapes the conversation to compact. */
export const compactBody = responsesBody
  .pick({
    model: true,
    instructions: true,
    previous_response_id: true,
    service_tier: true,
    prompt_cache_key: true,
    prompt_cache_retention: true,
    prompt_cache_options: true,
    image: true,
  })
  .extend({ input: responsesBody.shape.input.nullish() });
export type CompactBody = z.infer<typeof compactBody>;

/** Cache hints that ask for something, and image settings, refused as on POST /v1/responses. */
export const COMPACT_PARAMS = paramRules(
  compactBody.shape,
  refusedWhenSet(['prompt_cache_retention', 'prompt_cache_options', 'image']),
);

const INSTRUCTIONS =
  'You compact a conversation between a user and an assistant so that it can be continued from ' +
  'your summary alone, without the turns it replaces. Keep the goal, the decisions taken, names, ' +
  'facts, numbers, file paths and code identifiers, the tool results that still matter, what has ' +
  'been done and what remains to be done. Answer with the summary text only.';

/** Per message of the transcript, so one huge tool output cannot push the call past the model's context. */
const CLIP = 8000;
/** The user messages kept verbatim beside the summary, newest first, up to about 20,000 tokens. */
const KEPT_CHARS = 80_000;

const clip = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

function textOf(m: ChatMessage): string {
  let text =
    typeof m.content === 'string'
      ? m.content
      : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '[image]')).join(' ');
  for (const c of m.tool_calls ?? []) text += ` [called ${c.function.name}(${c.function.arguments})]`;
  return text;
}

/** The summary call: the workflow's own model, on a transcript of the conversation. */
export function compactionRequest(body: CompactBody, conversation: readonly ChatMessage[]): NativeBody {
  const lines = conversation.map(
    (m) => `${m.role === 'tool' ? 'tool result' : m.role}: ${clip(textOf(m), CLIP)}`,
  );
  const context = body.instructions
    ? `The assistant's instructions:\n${clip(body.instructions, CLIP)}\n\n`
    : '';
  return {
    model: body.model,
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: `${context}The conversation:\n${lines.join('\n')}` },
    ],
    max_tokens: 4096,
    ...(body.service_tier != null ? { service_tier: body.service_tier } : {}),
  } as NativeBody;
}

/**
 * The user messages kept verbatim in the compacted list (as OpenAI's compaction keeps them): the
 * newest that fit the budget, in their order; a summary of an earlier compaction is not kept, the new
 * summary covers it.
 */
export function keptUserMessages(conversation: readonly ChatMessage[]): Record<string, unknown>[] {
  const kept: string[] = [];
  let size = 0;
  for (let i = conversation.length - 1; i >= 0; i--) {
    const m = conversation[i] as ChatMessage;
    if (m.role !== 'user') continue;
    const text = textOf(m);
    if (!text || text.startsWith(COMPACTION_LEAD)) continue;
    if (size + text.length > KEPT_CHARS) break;
    size += text.length;
    kept.unshift(text);
  }
  return kept.map((text) => ({
    type: 'message',
    id: newId('msg'),
    status: 'completed',
    role: 'user',
    content: [{ type: 'input_text', text }],
  }));
}
