/**
 * A native Messages request (NativeRequest, dialect `anthropic-messages`) as the body Claude gets:
 * the client's body as it sent it (thinking, cache_control, is_error, tool_result blocks, every
 * field), with what the gateway added merged in: the slot's model, the workflow's instructions and
 * a session summary in `system`, a session's earlier turns before the client's, and the
 * structured-output instruction. The canonical messages say what was added: all but the last
 * `turns` of them, less the system message that stands for the client's own `system`.
 */
import { isObject, textOf } from '../common.ts';
import type { ChatMessage, ChatRequest, CompletionRequest, NativeRequest, UpstreamTarget } from '../types.ts';
import {
  type AnthropicMessage,
  anthropicTurns,
  asBlocks,
  DEFAULT_MAX_TOKENS,
  outputInstruction,
} from './turns.ts';

type SystemPart = { text: string } | { own: unknown };

/** Whether the request is a native Messages request (only this adapter and Claude on Vertex AI read it). */
export const isNativeMessages = (
  req: ChatRequest | CompletionRequest | undefined,
): req is ChatRequest & { native: NativeRequest } =>
  req?.kind === 'chat' && req.native?.dialect === 'anthropic-messages';

/** The client's headers that travel with a native body (the surface chose which). */
export const nativeHeaders = (req: ChatRequest | CompletionRequest | undefined): Record<string, string> =>
  isNativeMessages(req) ? req.native.headers : {};

/** `system` as one string when every part is text, else as text blocks (the client's kept as sent). */
function systemOf(parts: SystemPart[]): unknown {
  if (parts.length === 0) return undefined;
  if (parts.length === 1 && 'own' in parts[0]!) return parts[0].own;
  if (parts.every((p) => 'text' in p || typeof p.own === 'string'))
    return parts
      .map((p) => ('text' in p ? p.text : (p.own as string)))
      .filter((t) => t !== '')
      .join('\n\n');
  return parts.flatMap((p) => {
    if ('text' in p) return [{ type: 'text', text: p.text }];
    if (typeof p.own === 'string') return p.own === '' ? [] : [{ type: 'text', text: p.own }];
    return Array.isArray(p.own) ? p.own : [];
  });
}

/** The gateway's turns, then the client's; two turns of one role at the seam become one. */
function joinTurns(added: AnthropicMessage[], own: unknown): unknown[] {
  const turns = Array.isArray(own) ? (own as unknown[]) : [];
  const last = added[added.length - 1];
  const first = turns[0];
  if (!last || !isObject(first) || first.role !== last.role) return [...added, ...turns];
  const content = first.content;
  const tail = typeof content === 'string' ? asBlocks(content) : Array.isArray(content) ? content : [];
  return [
    ...added.slice(0, -1),
    { role: last.role, content: [...asBlocks(last.content), ...tail] },
    ...turns.slice(1),
  ];
}

export function nativeAnthropicBody(
  target: UpstreamTarget,
  req: ChatRequest,
  native: NativeRequest,
  stream: boolean,
): Record<string, unknown> {
  const cut = Math.max(0, req.messages.length - native.turns);
  const system: SystemPart[] = [];
  const added: ChatMessage[] = [];
  const own = native.body.system;
  // The canonical stand-in for the client's system prompt is replaced by the prompt as sent.
  let found = native.system === undefined;
  let placed = own === undefined;
  for (const m of req.messages.slice(0, cut)) {
    if (m.role !== 'system' && m.role !== 'developer') {
      added.push(m);
      continue;
    }
    const text = textOf(m.content);
    if (!found && text === native.system) {
      found = true;
      if (!placed) system.push({ own });
      placed = true;
    } else if (text !== '') system.push({ text });
  }
  // A system prompt without text (empty blocks) has no canonical stand-in.
  if (!placed) system.push({ own });
  const instruction = outputInstruction(req);
  if (instruction) system.push({ text: instruction });
  const { system: _own, ...rest } = native.body;
  const body: Record<string, unknown> = {
    model: target.model,
    ...rest,
    max_tokens:
      native.body.max_tokens ?? req.max_tokens ?? target.options?.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
    messages: joinTurns(anthropicTurns(added).messages, native.body.messages),
  };
  const merged = systemOf(system);
  if (merged !== undefined) body.system = merged;
  if (stream) body.stream = true;
  return body;
}
