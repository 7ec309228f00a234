/** Canonical requests → Cohere API v2 (`/v2/chat`, `/v2/embed`). */
import { JSON_ONLY_INSTRUCTION, textOf, trimSlash } from '../common.ts';
import { inEffect, refuseParam, setParams } from '../optional-params.ts';
import type {
  ChatMessage,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
  UpstreamTarget,
} from '../types.ts';

export type CohereOp = 'chat' | 'embed';

export function cohereUrl(target: UpstreamTarget, op: CohereOp): string {
  return `${trimSlash(target.baseURL)}/v2/${op}`;
}

export function cohereHeaders(target: UpstreamTarget): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json',
    authorization: `Bearer ${target.apiKey}`,
  };
}

type Content =
  | string
  | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[];

function content(c: ChatMessage['content']): Content {
  if (c == null) return '';
  if (typeof c === 'string') return c;
  return c.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'image_url', image_url: { url: p.image_url.url } },
  );
}

/** Cohere's penalties run from 0 to 1 (OpenAI's from -2 to 2). */
function penalty(param: string, value: unknown): number {
  if (typeof value !== 'number' || value < 0 || value > 1)
    throw refuseParam('cohere', param, 'Cohere penalties are between 0 and 1');
  return value;
}

function optionalParams(req: ChatRequest | CompletionRequest, body: Record<string, unknown>): void {
  for (const [param, value] of setParams(req)) {
    switch (param) {
      case 'seed':
        body.seed = value;
        break;
      case 'presence_penalty':
      case 'frequency_penalty':
        body[param] = penalty(param, value);
        break;
      case 'service_tier':
        if (value !== 'auto' && value !== 'default')
          throw refuseParam('cohere', param, 'the Chat API has no service tiers');
        break;
      case 'reasoning_effort':
        if (value !== 'none') throw refuseParam('cohere', param, 'only "none" maps (no effort levels)');
        break;
      case 'parallel_tool_calls': {
        const chat = req.kind === 'chat' ? req : undefined;
        if (value === false && chat?.tools?.length && chat.tool_choice !== 'none')
          throw refuseParam('cohere', param, 'Cohere cannot limit a turn to one tool call');
        break;
      }
      default:
        if (inEffect(param, value)) throw refuseParam('cohere', param, 'the Chat API has no equivalent');
    }
  }
}

export function buildCohereChatBody(
  req: ChatRequest | CompletionRequest,
  model: string,
  stream: boolean,
): string {
  const messages: Record<string, unknown>[] = [];
  const body: Record<string, unknown> = { model, messages };
  if (req.kind === 'completion') {
    messages.push({ role: 'user', content: req.prompt });
  } else {
    for (const m of req.messages) {
      switch (m.role) {
        case 'system':
        case 'developer':
          messages.push({ role: 'system', content: textOf(m.content) });
          break;
        case 'user':
          messages.push({ role: 'user', content: content(m.content) });
          break;
        case 'assistant': {
          const msg: Record<string, unknown> = { role: 'assistant' };
          const text = textOf(m.content);
          if (text.length > 0) msg.content = text;
          if (m.tool_calls?.length)
            msg.tool_calls = m.tool_calls.map((tc) => ({
              id: tc.id,
              type: 'function',
              function: { name: tc.function.name, arguments: tc.function.arguments },
            }));
          messages.push(msg);
          break;
        }
        case 'tool':
          messages.push({ role: 'tool', tool_call_id: m.tool_call_id ?? '', content: textOf(m.content) });
          break;
      }
    }
    const choice = req.tool_choice;
    if (req.tools?.length && choice !== 'none') {
      // A named tool is the only tool offered, and required: Cohere's tool_choice has no names.
      const named = typeof choice === 'object' ? choice.function.name : undefined;
      const tools = named ? req.tools.filter((t) => t.function.name === named) : req.tools;
      body.tools = tools.map((t) => ({
        type: 'function',
        function: {
          name: t.function.name,
          description: t.function.description,
          parameters: t.function.parameters ?? { type: 'object', properties: {} },
        },
      }));
      if (choice === 'required' || named) body.tool_choice = 'REQUIRED';
    } else if (req.tools?.length && choice === 'none') {
      body.tools = req.tools.map((t) => ({
        type: 'function',
        function: {
          name: t.function.name,
          description: t.function.description,
          parameters: t.function.parameters ?? { type: 'object', properties: {} },
        },
      }));
      body.tool_choice = 'NONE';
    }
    if (req.structured) body.response_format = { type: 'json_object', json_schema: req.structured.schema };
    else if (req.json) {
      body.response_format = { type: 'json_object' };
      messages.unshift({ role: 'system', content: JSON_ONLY_INSTRUCTION });
    }
  }
  if (req.max_tokens !== undefined) body.max_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.p = req.top_p;
  if (req.kind === 'chat' && req.top_k !== undefined) body.k = req.top_k;
  if (req.stop !== undefined && req.stop.length > 0) body.stop_sequences = req.stop;
  optionalParams(req, body);
  if (stream) body.stream = true;
  return JSON.stringify(body);
}

/** Documents by default: what an OpenAI-style embedding request (no input type) is mostly used for. */
export function buildCohereEmbedBody(req: EmbeddingRequest, model: string): string {
  if (req.dimensions !== undefined && !model.includes('embed-v4'))
    throw refuseParam('cohere', 'dimensions', `${model} has one output size`);
  return JSON.stringify({
    model,
    texts: typeof req.input === 'string' ? [req.input] : req.input,
    input_type: 'search_document',
    embedding_types: ['float'],
    ...(req.dimensions === undefined ? {} : { output_dimension: req.dimensions }),
  });
}
