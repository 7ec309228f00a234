import type { FastifyReply } from 'fastify';
import type { RunJob } from '../async/runner.ts';
import { GatewayError } from '../errors/index.ts';
import type { StoredResponse } from '../stored-responses/types.ts';
import { acceptBackground, type BackgroundRequest } from './accept.ts';
import { runBackground } from './run.ts';
import { streamEvents } from './stream.ts';
import { type BackgroundDeps, LIVE } from './types.ts';

/**
 * Background responses of the Responses API (`background: true`): accepted and stored `queued`, run
 * as jobs of the async queue on any pod (a killed pod's jobs are taken over), polled with GET
 * /v1/responses/{id}, cancelled, and, when streamed, read back from any sequence number.
 */
export class BackgroundResponses {
  readonly #d: BackgroundDeps;

  constructor(deps: BackgroundDeps) {
    this.#d = deps;
  }

  accept(r: BackgroundRequest): Promise<Record<string, unknown>> {
    return acceptBackground(this.#d, r);
  }

  /** The job handler (RunJob.response set). */
  run(job: RunJob): Promise<void> {
    return runBackground(this.#d, job);
  }

  /**
   * POST /v1/responses/{id}/cancel: a queued or running background response becomes `cancelled` (its
   * job stops at its next look); one that already finished is returned as it is.
   */
  async cancel(projectId: string, rec: StoredResponse): Promise<Record<string, unknown>> {
    if (!rec.background)
      throw new GatewayError(
        'invalid_request',
        'Only responses created with background set to true can be cancelled.',
        {
          param: 'response_id',
        },
      );
    let current: StoredResponse | undefined = rec;
    while (current && (LIVE as readonly string[]).includes(String(current.response.status))) {
      const response = { ...current.response, status: 'cancelled' };
      if (await this.#d.store.transition(projectId, { ...current, response }, LIVE)) return response;
      // It moved on meanwhile (started, or finished): look again.
      current = await this.#d.store.get(projectId, rec.id);
    }
    return (current ?? rec).response;
  }

  /** GET /v1/responses/{id}?stream=true: the events after `after`, followed as they come. */
  stream(reply: FastifyReply, projectId: string, rec: StoredResponse, after: number): Promise<FastifyReply> {
    if (!rec.background?.stream)
      throw new GatewayError(
        'invalid_request',
        'Only a background response created with stream set to true can be streamed back.',
        { param: 'stream' },
      );
    return this.follow(reply, projectId, rec.id, after);
  }

  /** The events of a background streamed response after `after`, followed as they come. */
  follow(reply: FastifyReply, projectId: string, id: string, after: number): Promise<FastifyReply> {
    return streamEvents(this.#d, reply, projectId, id, after);
  }
}
