/** Canonical chat/completion → Anthropic Messages API request. */
import { BoundedMap } from '../../domain/bounded-map.ts';
import { type SystemText, trimSlash } from '../common.ts';
import { inEffect, refuseParam, setParams } from '../optional-params.ts';
import type { ChatRequest, CompletionRequest, ToolChoice, UpstreamTarget } from '../types.ts';
import { isNativeMessages, nativeAnthropicBody, nativeHeaders } from './native.ts';
import {
  type AnthropicMessage,
  anthropicTurns,
  cacheControl,
  DEFAULT_MAX_TOKENS,
  outputInstruction,
  systemValue,
} from './turns.ts';

export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

const urlCache = new BoundedMap<string, string>(10_000);

export function anthropicUrl(target: UpstreamTarget): string {
  let url = urlCache.get(target.baseURL);
  if (url === undefined) {
    url = `${trimSlash(target.baseURL)}/v1/messages`;
    urlCache.set(target.baseURL, url);
  }
  return url;
}

/** The request headers; a native request adds the client's headers that travel with its body. */
export function anthropicHeaders(
  target: UpstreamTarget,
  req?: ChatRequest | CompletionRequest,
): Record<string, string> {
  return {
    ...nativeHeaders(req),
    'content-type': 'application/json',
    'x-api-key': target.apiKey,
    'anthropic-version': target.options?.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
  };
}

export function mapToolChoice(
  choice: ToolChoice | undefined,
  parallel = true,
): Record<string, unknown> | undefined {
  // `parallel_tool_calls: false` is the tool choice's `disable_parallel_tool_use` (absent from `none`).
  const single = parallel ? {} : { disable_parallel_tool_use: true };
  if (choice === undefined) return parallel ? undefined : { type: 'auto', ...single };
  if (choice === 'auto') return { type: 'auto', ...single };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...single };
  return { type: 'tool', name: choice.function.name, ...single };
}

/** OpenAI service tiers Anthropic has an equivalent for. */
const SERVICE_TIERS: Record<string, string> = { auto: 'auto', default: 'standard_only' };

/**
 * The optional parameters the Messages API takes under another name, or a refusal for those it
 * lacks: no seed, penalties, logit bias or stored completions, and no effort-level thinking (its
 * extended thinking needs the thinking blocks of earlier turns back, which the gateway does not keep).
 */
function optionalParams(req: ChatRequest | CompletionRequest, body: Record<string, unknown>): void {
  for (const [param, value] of setParams(req)) {
    switch (param) {
      case 'service_tier': {
        const tier = SERVICE_TIERS[value as string];
        if (tier === undefined)
          throw refuseParam(
            'anthropic',
            param,
            `the tiers it maps are ${Object.keys(SERVICE_TIERS).join(', ')}`,
          );
        body.service_tier = tier;
        break;
      }
      case 'reasoning_effort':
        if (value !== 'none')
          throw refuseParam('anthropic', param, 'only "none" maps (no extended thinking)');
        break;
      case 'parallel_tool_calls':
        break; // in the tool choice
      default:
        if (inEffect(param, value))
          throw refuseParam('anthropic', param, 'the Messages API has no equivalent');
    }
  }
}

export function buildAnthropicBody(
  target: UpstreamTarget,
  req: ChatRequest | CompletionRequest,
  stream: boolean,
): string {
  return JSON.stringify(anthropicBody(target, req, stream));
}

/** The Messages API body as an object (Vertex AI sends it with the model in the URL instead). */
export function anthropicBody(
  target: UpstreamTarget,
  req: ChatRequest | CompletionRequest,
  stream: boolean,
): Record<string, unknown> {
  if (isNativeMessages(req)) return nativeAnthropicBody(target, req, req.native, stream);
  let system: SystemText[] = [];
  let messages: AnthropicMessage[] = [];
  if (req.kind === 'completion') {
    messages.push({ role: 'user', content: req.prompt });
  } else {
    ({ system, messages } = anthropicTurns(req.messages));
    const instruction = outputInstruction(req);
    if (instruction) system.push({ text: instruction });
  }

  const body: Record<string, unknown> = {
    model: target.model,
    max_tokens: req.max_tokens ?? target.options?.defaultMaxTokens ?? DEFAULT_MAX_TOKENS,
    messages,
  };
  if (system.some((t) => t.text.length > 0)) body.system = systemValue(system);
  if (req.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, req.temperature));
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.kind === 'chat' && req.top_k !== undefined) body.top_k = req.top_k;
  if (req.stop !== undefined && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.kind === 'chat') {
    if (req.tools && req.tools.length > 0) {
      body.tools = req.tools.map((t) => ({
        name: t.function.name,
        description: t.function.description,
        input_schema: { type: 'object', properties: {}, ...t.function.parameters },
        ...(t.cache ? { cache_control: cacheControl(t.cache) } : {}),
      }));
      const tc = mapToolChoice(req.tool_choice, req.parallel_tool_calls !== false);
      if (tc) body.tool_choice = tc;
    }
  }
  if (req.user !== undefined) body.metadata = { user_id: req.user };
  optionalParams(req, body);
  if (stream) body.stream = true;
  return body;
}
