import {
  type Context,
  DiagLogLevel,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { parseKeyPairsIntoRecord, W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import {
  attemptAnswered,
  attemptFailed,
  attemptStart,
  callbackAttributes,
  exchangeEnd,
  httpStart,
  toolStart,
  webhookEnd,
  webhookStart,
} from './attributes.ts';
import type { SamplerName, TracingConfig } from './config.ts';
import type {
  AnswerFields,
  AttemptFailure,
  AttemptTrace,
  CallbackChannel,
  CallbackTrace,
  ChainRequest,
  ChainTrace,
  ExchangeEnd,
  ExchangeTrace,
  HttpRequestView,
  SlotRef,
  TokenUsage,
  ToolCallView,
  ToolTrace,
  TraceContext,
  Tracing,
  WebhookJob,
  WebhookTrace,
} from './types.ts';

// The OpenTelemetry SDK behind the Tracing interface. Nothing global is registered (no global
// tracer provider, no context manager): every span is started from an explicit parent context.

const SCOPE = 'switchyard-gateway';
/** How long closing waits for the last spans to be exported. */
const CLOSE_WAIT_MS = 5_000;
const propagator = new W3CTraceContextPropagator();

function contextOf(span: Span): TraceContext {
  const carrier: Partial<TraceContext> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier as TraceContext;
}

/** The parent a carried (or received) context stands for; a malformed one starts a new trace. */
const parentOf = (carrier: object | undefined): Context =>
  carrier ? propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter) : ROOT_CONTEXT;

const under = (span: Span): Context => trace.setSpan(ROOT_CONTEXT, span);

class OtelAttempt implements AttemptTrace {
  readonly context: TraceContext;
  readonly #span: Span;
  #done = false;

  constructor(span: Span) {
    this.#span = span;
    this.context = contextOf(span);
  }

  answered(result: AnswerFields, usage: TokenUsage | undefined, ttfcMs?: number): void {
    if (this.#done) return;
    this.#done = true;
    this.#span.setAttributes(attemptAnswered(result, usage, ttfcMs));
    this.#span.end();
  }

  failed(e: AttemptFailure): void {
    if (this.#done) return;
    this.#done = true;
    this.#span.setAttributes(attemptFailed(e));
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message: e.message });
    this.#span.end();
  }
}

class OtelChain implements ChainTrace {
  readonly #tracer: Tracer;
  readonly #parent: Span;
  readonly #p: ChainRequest;
  readonly #projectId: string;
  readonly #stream: boolean;

  constructor(tracer: Tracer, parent: Span, p: ChainRequest, projectId: string, stream: boolean) {
    this.#tracer = tracer;
    this.#parent = parent;
    this.#p = p;
    this.#projectId = projectId;
    this.#stream = stream;
  }

  attempt(slot: SlotRef): AttemptTrace {
    const { name, attributes } = attemptStart(slot, this.#p, this.#projectId, this.#stream);
    return new OtelAttempt(
      this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, under(this.#parent)),
    );
  }

  skipped(slot: SlotRef, reason: string): void {
    this.#parent.addEvent('switchyard.slot_skipped', {
      'switchyard.slot': slot.slot,
      'switchyard.provider': slot.provider,
      'gen_ai.request.model': slot.model,
      'switchyard.reason': reason,
    });
  }
}

class OtelExchange implements ExchangeTrace {
  readonly #tracer: Tracer;
  readonly #span: Span;
  #context: TraceContext | undefined;
  #ended = false;

  constructor(tracer: Tracer, span: Span) {
    this.#tracer = tracer;
    this.#span = span;
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  get context(): TraceContext {
    this.#context ??= contextOf(this.#span);
    return this.#context;
  }

  chain(p: ChainRequest, projectId: string, stream: boolean): ChainTrace {
    return new OtelChain(this.#tracer, this.#span, p, projectId, stream);
  }

  child(name: string): ExchangeTrace {
    const span = this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL }, under(this.#span));
    return new OtelExchange(this.#tracer, span);
  }

  tool(call: ToolCallView): ToolTrace {
    const span = this.#tracer.startSpan(
      `execute_tool ${call.name}`,
      { kind: SpanKind.INTERNAL, attributes: toolStart(call) },
      under(this.#span),
    );
    let ended = false;
    return {
      end(outcome, error) {
        if (ended) return;
        ended = true;
        span.setAttribute('switchyard.outcome', outcome);
        if (error !== undefined) {
          span.setAttribute('error.type', outcome);
          span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        }
        span.end();
      },
    };
  }

  end(end: ExchangeEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    const { attributes, error } = exchangeEnd(end);
    this.#span.setAttributes(attributes);
    if (error) this.#span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.#span.end();
  }
}

class OtelWebhook implements WebhookTrace {
  readonly #span: Span;
  readonly context: TraceContext;
  #ended = false;

  constructor(span: Span) {
    this.#span = span;
    this.context = contextOf(span);
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  end(outcome: string, status: number, error?: { type: string; message: string }): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span.setAttributes(webhookEnd(outcome, status, error));
    if (error) this.#span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    this.#span.end();
  }
}

class OtelCallback implements CallbackTrace {
  readonly #span: Span;
  #context: TraceContext | undefined;
  #ended = false;

  constructor(span: Span) {
    this.#span = span;
  }

  get context(): TraceContext {
    this.#context ??= contextOf(this.#span);
    return this.#context;
  }

  fail(errorType: string, message: string): void {
    this.#span.setAttribute('error.type', errorType);
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span.end();
  }
}

function samplerOf(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/** The OTLP exporter of the configured protocol; only that package (and gRPC's stack) is loaded. */
async function exporterOf(cfg: TracingConfig): Promise<SpanExporter> {
  const { OTLPTraceExporter } =
    cfg.protocol === 'grpc'
      ? await import('@opentelemetry/exporter-trace-otlp-grpc')
      : cfg.protocol === 'http/json'
        ? await import('@opentelemetry/exporter-trace-otlp-http')
        : await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter({ url: cfg.url });
}

class OtelTracing implements Tracing {
  readonly enabled = true;
  readonly #provider: TracerProvider;
  readonly #tracer: Tracer;

  constructor(provider: TracerProvider) {
    this.#provider = provider;
    this.#tracer = provider.getTracer(SCOPE);
  }

  request(req: HttpRequestView): ExchangeTrace {
    const { name, attributes } = httpStart(req);
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parentOf(req.headers));
    return new OtelExchange(this.#tracer, span);
  }

  job(carried: TraceContext | undefined, channelId: string): ExchangeTrace {
    const span = this.#tracer.startSpan(
      'switchyard.async.job',
      { kind: SpanKind.CONSUMER, attributes: { 'switchyard.channel_id': channelId } },
      parentOf(carried),
    );
    return new OtelExchange(this.#tracer, span);
  }

  webhook(job: WebhookJob): WebhookTrace {
    const { name, attributes } = webhookStart(job);
    return new OtelWebhook(
      this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parentOf(job.trace)),
    );
  }

  callback(
    kind: 'callback' | 'callback_timeout',
    channel: CallbackChannel,
    link?: TraceContext,
  ): CallbackTrace {
    const linked = link ? trace.getSpanContext(parentOf(link)) : undefined;
    const span = this.#tracer.startSpan(
      `switchyard.async.${kind}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: callbackAttributes(channel),
        links: linked ? [{ context: linked }] : [],
      },
      parentOf(channel.trace),
    );
    return new OtelCallback(span);
  }

  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  /** At most CLOSE_WAIT_MS: a collector that went away must not hold up a pod's exit. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((r) => {
      timer = setTimeout(r, CLOSE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([this.#provider.shutdown().catch(() => undefined), waited]);
    clearTimeout(timer);
    diag.disable();
  }
}

/** Starts the SDK: resource, sampler, batching OTLP exporter; the SDK's own warnings go to the log. */
export async function startOtelTracing(cfg: TracingConfig, logger: Logger): Promise<Tracing> {
  const say =
    (level: 'warn' | 'error') =>
    (message: string, ...args: unknown[]) =>
      logger[level]({ msg: `tracing: ${message}`, ...(args.length ? { detail: args.map(String) } : {}) });
  const quiet = () => {};
  diag.setLogger(
    { error: say('error'), warn: say('warn'), info: quiet, debug: quiet, verbose: quiet },
    DiagLogLevel.WARN,
  );
  const given = parseKeyPairsIntoRecord(cfg.resourceAttributes);
  const resource = defaultResource().merge(
    resourceFromAttributes({
      ...given,
      'service.name': cfg.serviceName ?? given['service.name'] ?? SCOPE,
    }),
  );
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(cfg.sampler, cfg.ratio),
    spanProcessors: [new BatchSpanProcessor({ exporter: await exporterOf(cfg), ...definedOf(cfg.batch) })],
  });
  logger.info({ msg: 'tracing on', endpoint: cfg.url, protocol: cfg.protocol, sampler: cfg.sampler });
  return new OtelTracing(provider);
}

const definedOf = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
