/**
 * Canonical requests → Bedrock Runtime: Converse / ConverseStream bodies for chat, vision and
 * completion; InvokeModel bodies for embeddings (Titan, Cohere) and images (Titan Image Generator,
 * Nova Canvas), each in its model family's own schema.
 */
import { unsupported } from '../../upstream/errors.ts';
import {
  guessImageMime,
  JSON_ONLY_INSTRUCTION,
  parseDataUrl,
  parseJsonArgs,
  type SystemText,
  structuredInstruction,
  systemRuns,
  textOf,
  trimSlash,
} from '../common.ts';
import { inEffect, refuseParam, setParams } from '../optional-params.ts';
import type {
  CacheBreakpoint,
  ChatMessage,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
  ImageRequest,
  ToolChoice,
  UpstreamTarget,
} from '../types.ts';

export type BedrockOp = 'converse' | 'converse-stream' | 'invoke';

/** Model ids carry `:` (and ARNs `/`): the path segment is percent-encoded, as the AWS SDKs send it. */
export function bedrockUrl(target: UpstreamTarget, op: BedrockOp): string {
  return `${trimSlash(target.baseURL)}/model/${encodeURIComponent(target.model)}/${op}`;
}

type CachePointBlock = { cachePoint: { type: 'default'; ttl?: '5m' | '1h' } };

type Block =
  | CachePointBlock
  | { text: string }
  | { image: { format: string; source: { bytes: string } | { s3Location: { uri: string } } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: { text: string }[] } };

interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

function imageFormat(mime: string): string {
  const format = IMAGE_FORMATS[mime.toLowerCase()];
  if (format === undefined) throw unsupported(`bedrock takes png, jpeg, gif and webp images, not ${mime}`);
  return format;
}

/** Converse takes image bytes or an S3 object; a web URL would have to be downloaded first. */
function imageBlock(url: string): Block {
  const data = parseDataUrl(url);
  if (data) return { image: { format: imageFormat(data.mimeType), source: { bytes: data.data } } };
  if (url.startsWith('s3://'))
    return { image: { format: imageFormat(guessImageMime(url)), source: { s3Location: { uri: url } } } };
  throw unsupported('bedrock takes images as data: URLs or s3:// URIs, not web URLs');
}

function blocks(content: ChatMessage['content']): Block[] {
  if (content == null) return [];
  // Converse refuses blank text blocks.
  if (typeof content === 'string') return content.length > 0 ? [{ text: content }] : [];
  const out: Block[] = [];
  for (const part of content) {
    if (part.type === 'text') {
      if (part.text.length > 0) out.push({ text: part.text });
    } else out.push(imageBlock(part.image_url.url));
  }
  return out;
}

/** Consecutive turns of one role are merged: tool results share one user turn. */
function push(out: Message[], role: Message['role'], content: Block[]): void {
  if (content.length === 0) return;
  const last = out[out.length - 1];
  if (last && last.role === role) last.content.push(...content);
  else out.push({ role, content });
}

function toolChoice(choice: ToolChoice | undefined): Record<string, unknown> | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  if (choice === 'none') return undefined;
  return { tool: { name: choice.function.name } };
}

/** Converse's ServiceTier types; `auto` is what it does unasked. */
const SERVICE_TIERS = new Set(['default', 'flex', 'priority']);
/** The characters Bedrock allows in requestMetadata values. */
const METADATA_VALUE = /^[a-zA-Z0-9\s:_@$#=/+,.-]{0,256}$/;

function optionalParams(req: ChatRequest | CompletionRequest, body: Record<string, unknown>): void {
  for (const [param, value] of setParams(req)) {
    switch (param) {
      case 'service_tier':
        if (value === 'auto') break;
        if (!SERVICE_TIERS.has(value as string))
          throw refuseParam('bedrock', param, `Converse's tiers are ${[...SERVICE_TIERS].join(', ')}`);
        body.serviceTier = { type: value };
        break;
      case 'reasoning_effort':
        if (value !== 'none')
          throw refuseParam('bedrock', param, 'only "none" maps (Converse has no effort levels)');
        break;
      case 'parallel_tool_calls': {
        const chat = req.kind === 'chat' ? req : undefined;
        if (value === false && chat?.tools?.length && chat.tool_choice !== 'none')
          throw refuseParam('bedrock', param, 'Converse cannot limit a turn to one tool call');
        break;
      }
      default:
        if (inEffect(param, value)) throw refuseParam('bedrock', param, 'Converse has no equivalent');
    }
  }
}

const hasToolBlocks = (messages: Message[]): boolean =>
  messages.some((m) => m.content.some((b) => 'toolUse' in b || 'toolResult' in b));

/**
 * Where a model takes Converse's prompt-cache checkpoints: Claude after tools, system text and
 * message content; Nova after system text and message content; other models none, so a client's
 * breakpoints are dropped for them rather than refused.
 */
export interface CachePoints {
  prompt: boolean;
  tools: boolean;
}

export function cachePointsOf(model: string): CachePoints {
  if (model.includes('anthropic.claude')) return { prompt: true, tools: true };
  return { prompt: model.includes('amazon.nova'), tools: false };
}

const NO_CACHE_POINTS: CachePoints = { prompt: false, tools: false };

const cachePoint = (cache: CacheBreakpoint): CachePointBlock => ({
  cachePoint: { type: 'default', ...(cache.ttl ? { ttl: cache.ttl } : {}) },
});

/** The system texts as one block, or split by the checkpoints that follow marked texts. */
const systemBlocks = (texts: readonly SystemText[]): Block[] =>
  systemRuns(texts).flatMap((r) => (r.cache ? [{ text: r.text }, cachePoint(r.cache)] : [{ text: r.text }]));

export function buildConverseBody(
  req: ChatRequest | CompletionRequest,
  caching: CachePoints = NO_CACHE_POINTS,
): string {
  const system: SystemText[] = [];
  const messages: Message[] = [];
  const body: Record<string, unknown> = { messages };
  /** A checkpoint after the content pushed last, for a message that carries a breakpoint. */
  const mark = (msg: ChatMessage) => {
    const last = messages[messages.length - 1];
    if (msg.cache && caching.prompt && last) last.content.push(cachePoint(msg.cache));
  };
  if (req.kind === 'completion') {
    push(messages, 'user', [{ text: req.prompt }]);
  } else {
    for (const msg of req.messages) {
      switch (msg.role) {
        case 'system':
        case 'developer': {
          const text = textOf(msg.content);
          if (text.length > 0 || msg.cache)
            system.push({ text, cache: caching.prompt ? msg.cache : undefined });
          break;
        }
        case 'user':
          push(messages, 'user', blocks(msg.content));
          mark(msg);
          break;
        case 'assistant': {
          const content = blocks(msg.content);
          for (const tc of msg.tool_calls ?? [])
            content.push({
              toolUse: {
                toolUseId: tc.id,
                name: tc.function.name,
                input: parseJsonArgs(tc.function.arguments),
              },
            });
          push(messages, 'assistant', content);
          mark(msg);
          break;
        }
        case 'tool':
          push(messages, 'user', [
            { toolResult: { toolUseId: msg.tool_call_id ?? '', content: [{ text: textOf(msg.content) }] } },
          ]);
          mark(msg);
          break;
      }
    }
    // No JSON-schema mode across Bedrock's models: the schema is an instruction, the gateway validates.
    if (req.structured) system.push({ text: structuredInstruction(req.structured) });
    else if (req.json) system.push({ text: JSON_ONLY_INSTRUCTION });
    const offered = req.tools !== undefined && req.tools.length > 0 && req.tool_choice !== 'none';
    if (offered) {
      const tools = (req.tools ?? []).flatMap((t) => {
        const spec = {
          toolSpec: {
            name: t.function.name,
            description: t.function.description,
            inputSchema: { json: { type: 'object', properties: {}, ...t.function.parameters } },
          },
        };
        return t.cache && caching.tools ? [spec, cachePoint(t.cache)] : [spec];
      });
      const choice = toolChoice(req.tool_choice);
      body.toolConfig = choice ? { tools, toolChoice: choice } : { tools };
    } else if (req.tool_choice === 'none' && hasToolBlocks(messages)) {
      // Converse needs toolConfig whenever the history holds tool calls, and then may call a tool.
      throw unsupported(
        'bedrock cannot forbid tool calls (tool_choice "none") in a conversation that has tool calls',
      );
    }
  }
  if (req.user !== undefined) {
    if (!METADATA_VALUE.test(req.user))
      throw refuseParam(
        'bedrock',
        'user',
        'requestMetadata values are at most 256 letters, digits, spaces and :_@$#=/+,.-',
      );
    body.requestMetadata = { user: req.user };
  }
  if (system.some((t) => t.text.length > 0)) body.system = systemBlocks(system);
  const inference: Record<string, unknown> = {};
  if (req.max_tokens !== undefined) inference.maxTokens = req.max_tokens;
  if (req.temperature !== undefined) inference.temperature = req.temperature;
  if (req.top_p !== undefined) inference.topP = req.top_p;
  if (req.stop !== undefined && req.stop.length > 0) inference.stopSequences = req.stop;
  // Converse's inferenceConfig has no top_k; each model family spells it differently, if at all.
  if (req.kind === 'chat' && req.top_k !== undefined)
    throw refuseParam('bedrock', 'top_k', 'Converse has no top_k');
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  optionalParams(req, body);
  return JSON.stringify(body);
}

/** The InvokeModel schema a model id belongs to (ids may carry a region prefix or be ARNs). */
export type EmbeddingFamily = 'titan' | 'cohere';
export type ImageFamily = 'titan-image';

export function embeddingFamily(model: string): EmbeddingFamily {
  if (model.includes('amazon.titan-embed')) return 'titan';
  if (model.includes('cohere.embed')) return 'cohere';
  throw unsupported(`bedrock embeddings are served for Titan and Cohere embedding models, not ${model}`);
}

export function imageFamily(model: string): ImageFamily {
  if (model.includes('amazon.titan-image-generator') || model.includes('amazon.nova-canvas'))
    return 'titan-image';
  throw unsupported(
    `bedrock images are served for Titan Image Generator and Nova Canvas models, not ${model}`,
  );
}

/** Cohere's limit of texts per call. */
export const COHERE_BATCH = 96;

/**
 * The InvokeModel bodies of an embedding request: Titan embeds one text per call, Cohere up to 96.
 */
export function buildEmbeddingBodies(model: string, req: EmbeddingRequest): string[] {
  const inputs = typeof req.input === 'string' ? [req.input] : req.input;
  if (embeddingFamily(model) === 'titan') {
    const v1 = model.includes('titan-embed-text-v1') || model.includes('titan-embed-image-v1');
    if (req.dimensions !== undefined && v1)
      throw refuseParam('bedrock', 'dimensions', `${model} has one output size`);
    return inputs.map((inputText) =>
      JSON.stringify(
        req.dimensions === undefined ? { inputText } : { inputText, dimensions: req.dimensions },
      ),
    );
  }
  // Cohere: embed-v4 takes an output dimension, v3 has one size.
  if (req.dimensions !== undefined && !model.includes('embed-v4'))
    throw refuseParam('bedrock', 'dimensions', `${model} has one output size`);
  const bodies: string[] = [];
  for (let i = 0; i < inputs.length; i += COHERE_BATCH) {
    bodies.push(
      JSON.stringify({
        texts: inputs.slice(i, i + COHERE_BATCH),
        input_type: 'search_document',
        embedding_types: ['float'],
        ...(req.dimensions === undefined ? {} : { output_dimension: req.dimensions }),
      }),
    );
  }
  return bodies;
}

const SIZE = /^(\d{2,5})x(\d{2,5})$/;

/** Titan Image Generator / Nova Canvas TEXT_IMAGE. OpenAI's `style` (vivid, natural) has no equivalent. */
export function buildImageBody(model: string, req: ImageRequest): string {
  imageFamily(model);
  if (req.style !== undefined)
    throw refuseParam('bedrock', 'style', 'Titan and Nova Canvas have no such styles');
  const config: Record<string, unknown> = { numberOfImages: req.n ?? 1 };
  if (req.size !== undefined) {
    const m = SIZE.exec(req.size);
    if (!m) throw refuseParam('bedrock', 'size', 'a size is <width>x<height>');
    config.width = Number(m[1]);
    config.height = Number(m[2]);
  }
  if (req.quality !== undefined) {
    const q =
      req.quality === 'hd' || req.quality === 'high' || req.quality === 'premium' ? 'premium' : req.quality;
    if (q !== 'premium' && q !== 'standard')
      throw refuseParam('bedrock', 'quality', 'the qualities are standard and premium (hd)');
    config.quality = q;
  }
  return JSON.stringify({
    taskType: 'TEXT_IMAGE',
    textToImageParams: { text: req.prompt },
    imageGenerationConfig: config,
  });
}
