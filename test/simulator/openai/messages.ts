/** Reading the text out of OpenAI chat messages (for the deterministic reply and token counts). */
import type { ChatMessage, ChatRequest } from './schemas.ts';

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: { type?: unknown; text?: unknown; refusal?: unknown }) =>
      typeof p.text === 'string' ? p.text : typeof p.refusal === 'string' ? p.refusal : '',
    )
    .filter(Boolean)
    .join(' ');
}

export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return contentText(m.content);
  }
  return '';
}

export function promptText(req: ChatRequest): string {
  let text = '';
  for (const m of req.messages) {
    text += contentText(m.content);
    if (m.role === 'assistant' && m.tool_calls) for (const c of m.tool_calls) text += c.function.arguments;
  }
  return text;
}

export function mentionsJson(messages: readonly ChatMessage[]): boolean {
  return messages.some((m) => /json/i.test(contentText(m.content)));
}

export function lastIsToolResult(messages: readonly ChatMessage[]): boolean {
  const last = messages[messages.length - 1];
  return last?.role === 'tool' || last?.role === 'function';
}
