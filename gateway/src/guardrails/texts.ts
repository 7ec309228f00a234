import type { CanonicalRequest, CanonicalResult, ChatMessage, ToolCall } from '../providers/types.ts';

/**
 * Every piece of text of a canonical request or result, each rewritten by `edit` (which returns
 * its argument when it has nothing to change, so unchanged parts are not copied). Whichever
 * surface asked, the text is here: every role and every earlier turn, tool-call arguments and
 * tool results, Responses `input` and `instructions` and Messages `system` (system messages by
 * then), completion prompts, embedding inputs, image prompts, speech input.
 */
export type Edit = (text: string) => string;

const editCalls = (calls: ToolCall[] | undefined, edit: Edit): ToolCall[] | undefined => {
  if (!calls) return calls;
  let changed = false;
  const out = calls.map((c) => {
    const args = edit(c.function.arguments);
    if (args === c.function.arguments) return c;
    changed = true;
    return { ...c, function: { ...c.function, arguments: args } };
  });
  return changed ? out : calls;
};

function editMessage(m: ChatMessage, edit: Edit): ChatMessage {
  let content = m.content;
  if (typeof content === 'string') content = edit(content);
  else if (Array.isArray(content)) {
    let changed = false;
    const parts = content.map((part) => {
      if (part.type !== 'text') return part;
      const text = edit(part.text);
      if (text === part.text) return part;
      changed = true;
      return { ...part, text };
    });
    if (changed) content = parts;
  }
  const calls = editCalls(m.tool_calls, edit);
  if (content === m.content && calls === m.tool_calls) return m;
  return { ...m, content, ...(calls ? { tool_calls: calls } : {}) };
}

export function editRequest(req: CanonicalRequest, edit: Edit): CanonicalRequest {
  switch (req.kind) {
    case 'chat': {
      let changed = false;
      const messages = req.messages.map((m) => {
        const out = editMessage(m, edit);
        if (out !== m) changed = true;
        return out;
      });
      return changed ? { ...req, messages } : req;
    }
    case 'completion':
    case 'image': {
      const prompt = edit(req.prompt);
      return prompt === req.prompt ? req : { ...req, prompt };
    }
    case 'embedding': {
      if (typeof req.input === 'string') {
        const input = edit(req.input);
        return input === req.input ? req : { ...req, input };
      }
      let changed = false;
      const input = req.input.map((t) => {
        const out = edit(t);
        if (out !== t) changed = true;
        return out;
      });
      return changed ? { ...req, input } : req;
    }
    case 'speech': {
      const input = edit(req.input);
      return input === req.input ? req : { ...req, input };
    }
    case 'transcription': {
      if (req.prompt === undefined) return req;
      const prompt = edit(req.prompt);
      return prompt === req.prompt ? req : { ...req, prompt };
    }
  }
}

/** The text of an answer: chat content and tool-call arguments, completion text, a transcript. */
export function editResult(res: CanonicalResult, edit: Edit): CanonicalResult {
  switch (res.kind) {
    case 'chat': {
      const content = res.content === null ? null : edit(res.content);
      const calls = editCalls(res.tool_calls, edit);
      if (content === res.content && calls === res.tool_calls) return res;
      // The provider's own body would carry the original text to its dialect's encoder.
      const { native: _native, ...rest } = res;
      return { ...rest, content, ...(calls ? { tool_calls: calls } : {}) };
    }
    case 'completion': {
      const text = edit(res.text);
      return text === res.text ? res : { ...res, text };
    }
    case 'transcription': {
      const text = edit(res.text);
      return text === res.text ? res : { ...res, text };
    }
    default:
      return res;
  }
}
