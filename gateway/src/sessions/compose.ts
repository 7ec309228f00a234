import type { ChatMessage } from '../providers/types.ts';
import type { SessionData, Turn } from './types.ts';

/** How the running summary reaches the provider: a system message right after the instructions. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation:\n';

const isSystem = (m: ChatMessage): boolean => m.role === 'system' || m.role === 'developer';

/** Index of the first message after the leading system/developer messages. */
export function leadLength(messages: readonly ChatMessage[]): number {
  let i = 0;
  while (i < messages.length && isSystem(messages[i]!)) i++;
  return i;
}

/**
 * What the provider sees for a session request: the leading system messages (the workflow's
 * instructions and the client's own), the running summary, the kept turns, then the new messages.
 */
export function withMemory(messages: readonly ChatMessage[], session: SessionData): ChatMessage[] {
  const lead = leadLength(messages);
  const out: ChatMessage[] = messages.slice(0, lead);
  if (session.summary) out.push({ role: 'system', content: SUMMARY_PREFIX + session.summary });
  for (const t of session.turns) out.push(t.message);
  for (let i = lead; i < messages.length; i++) out.push(messages[i]!);
  return out;
}

/** Session tokens as the provider will count them: summary plus turns. */
export const sessionTokens = (s: Pick<SessionData, 'summaryTokens' | 'turns'>): number =>
  s.turns.reduce((n, t) => n + t.tokens, s.summaryTokens);

/**
 * Which turns to fold once a session is past its threshold: everything between the first exchange
 * (up to its first assistant turn) and the latest turns, which keep about a quarter of the threshold and at
 * least the last exchange, starting at a user turn so no exchange is split. Undefined when fewer
 * than two turns would be folded (nothing worth a summary call).
 */
export function planFold(
  turns: readonly Turn[],
  threshold: number,
): { start: number; end: number } | undefined {
  const firstAssistant = turns.findIndex((t) => t.message.role === 'assistant');
  if (firstAssistant < 0) return undefined;
  const start = firstAssistant + 1;
  // A quarter of the threshold: after a fold the session sits well below it, so the next summary
  // comes a few turns later rather than after every turn.
  const budget = Math.floor(threshold / 4);
  let end = turns.length;
  let kept = 0;
  while (end > start) {
    const t = turns[end - 1]!;
    if (turns.length - end >= 2 && kept + t.tokens > budget) break;
    kept += t.tokens;
    end--;
  }
  while (end > start && turns[end]?.message.role !== 'user') end--;
  return end - start >= 2 ? { start, end } : undefined;
}

/** Plain text of a message for the summariser (images and tool calls named, not inlined). */
export function messageText(m: ChatMessage): string {
  let text =
    typeof m.content === 'string'
      ? m.content
      : (m.content ?? []).map((p) => (p.type === 'text' ? p.text : '[image]')).join(' ');
  for (const c of m.tool_calls ?? []) text += ` [called ${c.function.name}(${c.function.arguments})]`;
  return text;
}
