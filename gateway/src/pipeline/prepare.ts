import { isStreamable, type RequestType, takesStructuredOutput } from '#contract';
import type { AuthContext } from '../auth/authenticate.ts';
import { customerData } from '../domain/customer-data.ts';
import { GatewayError } from '../errors/index.ts';
import type { CanonicalRequest, NativeRequest } from '../providers/types.ts';
import { inferRequestType, toCanonical } from '../requests/canonical.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import { resolveStructured, schemaName } from '../requests/structured.ts';
import type { ExecutionPlan } from '../routing/plan.ts';
import { speaksDialect } from '../routing/plan.ts';
import { resolveRoute } from '../routing/resolve.ts';
import type { RuntimeWorkflow } from '../snapshot/runtime.ts';
import { assertCompilable, SchemaCompileError } from '../structured/validate.ts';

/** A validated request, routed and translated, ready for the failover engine. Surface-independent. */
export interface Prepared {
  plan: ExecutionPlan;
  request: CanonicalRequest;
  workflowName: string | null;
  requestedProvider: string;
  requestedModel: string;
  backups: { position: number; provider: string; model: string }[];
  customerData: Record<string, unknown>;
  eventName: string | undefined;
  /** The session the client continues (session-memory workflows), as sent. */
  sessionId: string | undefined;
}

export interface PrepareOptions {
  /** Compatible surface: `model` only ever names a workflow, of one of these request types. */
  compat?: { allowed: readonly RequestType[] } | undefined;
  /** Backend-pipeline workflows (eventName) run only as async jobs. */
  async: boolean;
  /** The client's body in a provider's own API, carried on a chat request (see NativeRequest). */
  native?: NativeRequest | undefined;
  /** The console's compare: run only this slot of the workflow (0 the primary, 1.. the backups). */
  pinSlot?: number | undefined;
}

/** The one refusal of a backend-pipeline workflow outside the async endpoint, for every surface. */
function refusePipelineWorkflow(wf: RuntimeWorkflow, compat: boolean): GatewayError {
  return new GatewayError(
    'model_not_supported',
    `Workflow "${wf.config.name}" is a backend-pipeline workflow (event "${wf.config.eventName}") and runs only asynchronously.`,
    {
      param: compat ? 'model' : 'workflow',
      hint: 'Use the async endpoint (POST /v1/ai/async), or remove eventName from the workflow.',
    },
  );
}

/** The OpenAI-compatible endpoint of each request type, named in the hint of a wrong-endpoint refusal. */
const COMPAT_ENDPOINT: Record<RequestType, string> = {
  chat: 'POST /v1/chat/completions',
  vision: 'POST /v1/chat/completions',
  completion: 'POST /v1/completions',
  embedding: 'POST /v1/embeddings',
  image: 'POST /v1/images/generations',
  audio: 'POST /v1/audio/speech or POST /v1/audio/transcriptions',
};

/** Compatible surface: "wrong endpoint for this model" comes before the body is checked against its type. */
function gateCompat(wf: RuntimeWorkflow, allowed: readonly RequestType[], async: boolean): void {
  if (wf.config.eventName && !async) throw refusePipelineWorkflow(wf, true);
  const type = wf.config.requestType;
  if (!allowed.includes(type))
    throw new GatewayError(
      'request_type_mismatch',
      `Workflow "${wf.config.name}" has request type ${type}; this endpoint serves ${allowed.join(' and ')} workflows.`,
      { param: 'model', hint: `Workflows of request type ${type} are served by ${COMPAT_ENDPOINT[type]}.` },
    );
}

/** The one slot a pinned request runs on; every slot when none is pinned. */
function pinned<T>(slots: T[], pin: number | undefined): T[] {
  if (pin === undefined) return slots;
  const slot = slots[pin];
  if (!slot)
    throw new GatewayError(
      'invalid_request',
      `slot ${pin} does not exist: this route has ${slots.length} slots.`,
      {
        param: 'slot',
      },
    );
  return [slot];
}

export function prepare(auth: AuthContext, body: NativeBody, opts: PrepareOptions): Prepared {
  const compat = opts.compat !== undefined;
  const route = resolveRoute(auth.project, {
    workflow: compat ? undefined : body.workflow,
    model: body.model,
    provider: compat ? undefined : body.provider,
  });
  const wf = route.kind === 'workflow' ? route.workflow : undefined;
  if (wf && opts.compat) gateCompat(wf, opts.compat.allowed, opts.async);
  if (wf?.config.eventName && !opts.async) throw refusePipelineWorkflow(wf, compat);
  const requestType = wf
    ? wf.config.requestType
    : inferRequestType(body, route.kind === 'direct' ? route.supported : []);
  const subject = wf ? `Workflow "${wf.config.name}"` : `Model "${body.model}"`;
  if (route.kind === 'direct' && !route.supported.includes(requestType))
    throw new GatewayError(
      'request_type_mismatch',
      `${subject} does not support request type ${requestType}.`,
      {
        param: 'model',
        hint: `It supports: ${route.supported.join(', ')}.`,
      },
    );
  if (body.stream && !isStreamable(requestType))
    throw new GatewayError('invalid_request', `stream is not supported for request type ${requestType}.`, {
      param: 'stream',
    });

  const structured = takesStructuredOutput(requestType)
    ? resolveStructured(
        body.response_format,
        wf?.config.structuredOutputSchema,
        body.structured_output_schema,
        schemaName(wf?.config.name ?? 'output'),
      )
    : ({ kind: 'none' } as const);
  if (structured.kind === 'schema') {
    try {
      assertCompilable(structured.output.schema);
    } catch (err) {
      if (err instanceof SchemaCompileError)
        throw new GatewayError(
          'invalid_request',
          `The structured output schema is not valid: ${err.message}`,
          { param: 'response_format' },
        );
      throw err;
    }
  }
  const slots = pinned(wf ? wf.slots : route.kind === 'direct' ? [route.slot] : [], opts.pinSlot);
  const primary = slots[0]!;
  const testMode = wf?.config.testMode ?? false;
  // Carried only to a chain with a slot that speaks it: elsewhere it would only weigh on the cache key.
  const native = opts.native && speaksDialect(testMode, slots, opts.native.dialect) ? opts.native : undefined;
  const request = toCanonical(body, {
    subject,
    requestType,
    systemInstructions: wf?.config.systemInstructions,
    structured,
    native,
  });
  return {
    plan: {
      workflow: wf,
      requestType,
      slots,
      testMode,
      structured: structured.kind === 'schema' ? structured.output : undefined,
      json: structured.kind === 'json',
      ...(opts.pinSlot === undefined ? {} : { pinnedSlot: opts.pinSlot }),
    },
    request,
    workflowName: wf?.config.name ?? null,
    requestedProvider: body.provider && !wf ? body.provider : primary.provider,
    requestedModel: wf ? primary.model : (body.model ?? primary.model),
    backups: wf?.backups ?? [],
    customerData: wf ? customerData(wf.config.cacheFields, body as Record<string, unknown>) : {},
    eventName: wf?.config.eventName,
    sessionId: body.session_id,
  };
}
