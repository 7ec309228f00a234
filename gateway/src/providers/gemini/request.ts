/** Canonical request → Gemini (Generative Language API v1beta) URL and body. */

import { BoundedMap } from '../../domain/bounded-map.ts';
import { DEFAULT_MAX_JSON_DEPTH, jsonTooDeep } from '../../json/depth.ts';
import { unsupported } from '../../upstream/errors.ts';
import {
  guessImageMime,
  isObject,
  JSON_ONLY_INSTRUCTION,
  parseDataUrl,
  parseJsonArgs,
  textOf,
  trimSlash,
} from '../common.ts';
import { inEffect, refuseParam, setParams } from '../optional-params.ts';
import type {
  ChatMessage,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
  ToolChoice,
  UpstreamTarget,
} from '../types.ts';

export type GeminiOp =
  | 'generateContent'
  | 'streamGenerateContent'
  | 'embedContent'
  | 'batchEmbedContents'
  | 'predict';

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

const urlCache = new BoundedMap<string, string>(10_000);

export function geminiUrl(target: UpstreamTarget, op: GeminiOp): string {
  const key = `${op} ${target.model} ${target.baseURL}`;
  let url = urlCache.get(key);
  if (url === undefined) {
    url = `${trimSlash(target.baseURL)}/v1beta/${modelPath(target.model)}:${op}`;
    if (op === 'streamGenerateContent') url += '?alt=sse';
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
  if (c === 123 /* { */ && !jsonTooDeep(text, DEFAULT_MAX_JSON_DEPTH)) {
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

/** Google's own mapping of OpenAI effort levels to Gemini 2.5 thinking budgets (tokens). */
const THINKING_BUDGETS: Record<string, number> = { none: 0, low: 1024, medium: 8192, high: 24576 };
/** Gemini 3 takes a thinking level instead, and cannot switch thinking off. */
const THINKING_LEVELS = new Set(['minimal', 'low', 'medium', 'high']);
const GEMINI_3 = /(^|\/)gemini-3/;
const INT32 = 2 ** 31;

function thinkingConfig(effort: string, model: string): Record<string, unknown> {
  if (GEMINI_3.test(model)) {
    if (!THINKING_LEVELS.has(effort))
      throw refuseParam(
        'gemini',
        'reasoning_effort',
        `Gemini 3 thinking levels are ${[...THINKING_LEVELS].join(', ')}`,
      );
    return { thinkingLevel: effort };
  }
  const budget = THINKING_BUDGETS[effort];
  if (budget === undefined)
    throw refuseParam(
      'gemini',
      'reasoning_effort',
      `the levels with a thinking budget are ${Object.keys(THINKING_BUDGETS).join(', ')}`,
    );
  return { thinkingBudget: budget };
}

/** Optional parameters → generationConfig, or a refusal for those Gemini lacks. */
function optionalParams(
  req: ChatRequest | CompletionRequest,
  model: string,
  generationConfig: Record<string, unknown>,
): void {
  for (const [param, value] of setParams(req)) {
    switch (param) {
      case 'seed':
        if (typeof value !== 'number' || value < -INT32 || value >= INT32)
          throw refuseParam('gemini', param, 'Gemini seeds are 32-bit integers');
        generationConfig.seed = value;
        break;
      case 'presence_penalty':
        generationConfig.presencePenalty = value;
        break;
      case 'frequency_penalty':
        generationConfig.frequencyPenalty = value;
        break;
      case 'reasoning_effort':
        generationConfig.thinkingConfig = thinkingConfig(value as string, model);
        break;
      case 'parallel_tool_calls': {
        // Gemini cannot be held to one call per turn; without tool calls there is nothing to hold.
        const chat = req.kind === 'chat' ? req : undefined;
        if (value === false && chat?.tools?.length && chat.tool_choice !== 'none')
          throw refuseParam('gemini', param, 'Gemini cannot limit a turn to one function call');
        break;
      }
      case 'service_tier':
        // One tier on generateContent: the automatic and the standard tier are what it serves.
        if (value !== 'auto' && value !== 'default')
          throw refuseParam('gemini', param, 'generateContent has no service tiers');
        break;
      default:
        if (inEffect(param, value)) throw refuseParam('gemini', param, 'the Gemini API has no equivalent');
    }
  }
}

export function buildGeminiGenerateBody(req: ChatRequest | CompletionRequest, model: string): string {
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
  if (contents.length === 0)
    throw unsupported('gemini needs a message with content, and every message of this request is empty');
  if (system.length > 0) body.systemInstruction = { parts: [{ text: system.join('\n\n') }] };
  if (req.temperature !== undefined) generationConfig.temperature = req.temperature;
  if (req.top_p !== undefined) generationConfig.topP = req.top_p;
  if (req.kind === 'chat' && req.top_k !== undefined) generationConfig.topK = req.top_k;
  if (req.max_tokens !== undefined) generationConfig.maxOutputTokens = req.max_tokens;
  if (req.stop !== undefined && req.stop.length > 0) generationConfig.stopSequences = req.stop;
  optionalParams(req, model, generationConfig);
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
