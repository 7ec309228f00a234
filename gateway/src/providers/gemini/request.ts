/** Canonical request → Gemini (Generative Language API v1beta) URL and body. */
import {
  guessImageMime,
  isObject,
  JSON_ONLY_INSTRUCTION,
  parseDataUrl,
  parseJsonArgs,
  textOf,
  trimSlash,
} from '../common.ts';
import type {
  ChatMessage,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
  ToolChoice,
  UpstreamTarget,
} from '../types.ts';

export type GeminiOp = 'generateContent' | 'streamGenerateContent' | 'embedContent' | 'batchEmbedContents';

type Part =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: { name: string; args: unknown } }
  | { functionResponse: { name: string; response: Record<string, unknown> } };

interface Content {
  role: 'user' | 'model';
  parts: Part[];
}

/** `models/gemini-2.0-flash` and `gemini-2.0-flash` both name the model `gemini-2.0-flash`. */
export function modelPath(model: string): string {
  return model.includes('/') ? model : `models/${model}`;
}

const urlCache = new Map<string, string>();

export function geminiUrl(target: UpstreamTarget, op: GeminiOp): string {
  const key = `${op} ${target.model} ${target.baseURL}`;
  let url = urlCache.get(key);
  if (url === undefined) {
    url = `${trimSlash(target.baseURL)}/v1beta/${modelPath(target.model)}:${op}`;
    if (op === 'streamGenerateContent') url += '?alt=sse';
    if (urlCache.size > 10_000) urlCache.clear();
    urlCache.set(key, url);
  }
  return url;
}

export function geminiHeaders(target: UpstreamTarget): Record<string, string> {
  return { 'content-type': 'application/json', 'x-goog-api-key': target.apiKey };
}

function userParts(content: ChatMessage['content']): Part[] {
  if (content == null) return [];
  if (typeof content === 'string') return content.length > 0 ? [{ text: content }] : [];
  const parts: Part[] = [];
  for (const p of content) {
    if (p.type === 'text') {
      parts.push({ text: p.text });
    } else {
      const url = p.image_url.url;
      const data = parseDataUrl(url);
      parts.push(
        data
          ? { inlineData: { mimeType: data.mimeType, data: data.data } }
          : { fileData: { mimeType: guessImageMime(url), fileUri: url } },
      );
    }
  }
  return parts;
}

function pushContent(out: Content[], role: 'user' | 'model', parts: Part[]): void {
  if (parts.length === 0) return;
  const last = out[out.length - 1];
  if (last && last.role === role) {
    for (const p of parts) last.parts.push(p);
    return;
  }
  out.push({ role, parts });
}

/** functionResponse.response must be an object: JSON objects pass through, anything else is wrapped. */
function toolResponse(content: ChatMessage['content']): Record<string, unknown> {
  const text = textOf(content);
  const c = text.charCodeAt(0);
  if (c === 123 /* { */) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isObject(parsed)) return parsed;
    } catch {
      // not JSON: wrapped below
    }
  }
  return { result: text };
}

function toolConfig(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined || choice === 'auto') return undefined;
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

export function buildGeminiGenerateBody(req: ChatRequest | CompletionRequest): string {
  const contents: Content[] = [];
  const system: string[] = [];
  const generationConfig: Record<string, unknown> = {};
  const body: Record<string, unknown> = { contents };

  if (req.kind === 'completion') {
    contents.push({ role: 'user', parts: [{ text: req.prompt }] });
  } else {
    /** tool_call_id → function name, needed by functionResponse. */
    const callNames = new Map<string, string>();
    for (const msg of req.messages) {
      switch (msg.role) {
        case 'system':
        case 'developer': {
          const text = textOf(msg.content);
          if (text.length > 0) system.push(text);
          break;
        }
        case 'user':
          pushContent(contents, 'user', userParts(msg.content));
          break;
        case 'assistant': {
          const parts = userParts(msg.content);
          if (msg.tool_calls) {
            for (const tc of msg.tool_calls) {
              callNames.set(tc.id, tc.function.name);
              parts.push({
                functionCall: { name: tc.function.name, args: parseJsonArgs(tc.function.arguments) },
              });
            }
          }
          pushContent(contents, 'model', parts);
          break;
        }
        case 'tool': {
          const name = (msg.tool_call_id && callNames.get(msg.tool_call_id)) || msg.name || '';
          pushContent(contents, 'user', [
            { functionResponse: { name, response: toolResponse(msg.content) } },
          ]);
          break;
        }
      }
    }
    if (req.tools && req.tools.length > 0) {
      body.tools = [
        {
          functionDeclarations: req.tools.map((t) => ({
            name: t.function.name,
            description: t.function.description,
            // JSON Schema as given (the OpenAPI-subset `parameters` rejects common JSON-Schema keywords).
            parametersJsonSchema: t.function.parameters,
          })),
        },
      ];
      const tc = toolConfig(req.tool_choice);
      if (tc) body.toolConfig = tc;
    }
    if (req.structured) {
      generationConfig.responseMimeType = 'application/json';
      generationConfig.responseJsonSchema = req.structured.schema;
    } else if (req.json) {
      generationConfig.responseMimeType = 'application/json';
      system.push(JSON_ONLY_INSTRUCTION);
    }
  }
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (req.temperature !== undefined) generationConfig.temperature = req.temperature;
  if (req.top_p !== undefined) generationConfig.topP = req.top_p;
  if (req.max_tokens !== undefined) generationConfig.maxOutputTokens = req.max_tokens;
  if (req.stop !== undefined && req.stop.length > 0) generationConfig.stopSequences = req.stop;
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return JSON.stringify(body);
}

export function buildGeminiEmbedBody(
  target: UpstreamTarget,
  req: EmbeddingRequest,
): { op: GeminiOp; body: string } {
  const dims = req.dimensions;
  if (typeof req.input === 'string') {
    return {
      op: 'embedContent',
      body: JSON.stringify({ content: { parts: [{ text: req.input }] }, outputDimensionality: dims }),
    };
  }
  const model = modelPath(target.model);
  return {
    op: 'batchEmbedContents',
    body: JSON.stringify({
      requests: req.input.map((text) => ({
        model,
        content: { parts: [{ text }] },
        outputDimensionality: dims,
      })),
    }),
  };
}
