import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { responsesUsage } from '../encoders/encode-responses.ts';
import { resultOrUpstreamError } from '../encoders/result-or-upstream-error.ts';
import { GatewayError } from '../errors/index.ts';
import type { Pipeline } from '../pipeline/run.ts';
import type { ChatMessage } from '../providers/types.ts';
import {
  COMPACT_PARAMS,
  compactBody,
  compactionRequest,
  encodeCompaction,
  keptUserMessages,
} from '../requests/compaction.ts';
import { LIMITS } from '../requests/limits.ts';
import { refuseParams } from '../requests/param-rules.ts';
import type { ResponsesBody } from '../requests/responses-schema.ts';
import { newId, responsesToNative } from '../requests/responses-translate.ts';
import { parseBody } from '../requests/zod-error.ts';
import { conversationOf } from '../stored-responses/record.ts';
import type { StoredResponseStore } from '../stored-responses/types.ts';
import { compatibleAuth, modelWorkflow } from './compatible-switch.ts';
import { serve } from './context.ts';

const CHAT_TYPES = ['chat', 'vision'] as const;
const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

const invalid = (message: string, param: string): GatewayError =>
  new GatewayError('invalid_request', message, { param });

/**
 * POST /v1/responses/compact: the conversation (previous_response_id's, then `input`) summarized by
 * the workflow's own model into a compaction item, returned after the user messages kept verbatim.
 * The summary call runs through `pipeline` (the limits-and-caps feature and the failover chain, as a
 * session summary does: no cache, no session memory), so it is priced, capped and logged like any
 * request. The item, sent back as input to any gateway process, stands for the turns it replaced.
 */
export function compactRoute(app: FastifyInstance, pipeline: Pipeline, responses: StoredResponseStore): void {
  const compact = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const auth = compatibleAuth(req);
    refuseParams(req.body, COMPACT_PARAMS);
    const body = parseBody(compactBody, req.body ?? {});
    const wf = modelWorkflow(auth, body.model);
    if (wf.config.sessionMemory.enabled)
      throw invalid(
        `Workflow "${body.model}" keeps its conversations in session memory, which summarizes them itself.`,
        'model',
      );
    let history: ChatMessage[] = [];
    if (body.previous_response_id) {
      const previous = await responses
        .get(auth.project.config.id, body.previous_response_id)
        .catch((err: unknown) => {
          throw new GatewayError('service_unavailable', 'Stored responses are unavailable right now.', {
            retryAfterSeconds: 1,
            cause: err,
          });
        });
      if (!previous)
        throw new GatewayError(
          'response_not_found',
          `Response with id "${body.previous_response_id}" not found.`,
          {
            param: 'previous_response_id',
          },
        );
      if (previous.sessionId)
        throw invalid(
          'That response was answered in session memory, which summarizes its conversation itself.',
          'previous_response_id',
        );
      history = conversationOf(previous);
    }
    const input = body.input;
    const hasInput = input != null && !(Array.isArray(input) && input.length === 0);
    if (!hasInput && history.length === 0)
      throw invalid('Nothing to compact: send input, previous_response_id, or both.', 'input');
    const conversation = hasInput
      ? responsesToNative({ model: body.model, input } as ResponsesBody, history, undefined).conversation
      : history;
    const { ex, result: outcome } = await serve(pipeline, req, reply, 'responses', {
      body: compactionRequest(body, conversation),
      stream: false,
      compat: { allowed: CHAT_TYPES },
    });
    if (outcome.kind === 'streaming') throw new Error('a compaction call produced a stream');
    const result = resultOrUpstreamError(reply, ex, outcome);
    const summary = result.kind === 'chat' ? (result.content ?? '').trim() : '';
    if (!summary)
      throw new GatewayError('upstream_error', 'The model answered the compaction with an empty summary.');
    return {
      id: newId('resp'),
      object: 'response.compaction',
      created_at: Math.floor(Date.now() / 1000),
      output: [
        ...keptUserMessages(conversation),
        { type: 'compaction', id: newId('cmp'), encrypted_content: encodeCompaction(summary) },
      ],
      usage: responsesUsage(result.kind === 'chat' ? (result.usage ?? NO_USAGE) : NO_USAGE),
    };
  };
  app.post(
    '/responses/compact',
    { config: { surface: 'responses', scope: 'ai' }, bodyLimit: LIMITS.chatBodyBytes },
    compact,
  );
}
