import type { Logger } from 'pino';
import type { KubeClient } from './client.ts';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
}

/**
 * Records core/v1 Events (what `kubectl describe` shows). Fire and forget: a failed Event never
 * fails a reconcile. Messages come from verdicts, which never contain key material.
 */
export class EventRecorder {
  readonly #client: KubeClient;
  readonly #logger: Logger;
  readonly #component: string;
  readonly #host: string;
  #inflight = 0;

  constructor(client: KubeClient, logger: Logger, host: string, component = 'switchyard-operator') {
    this.#client = client;
    this.#logger = logger;
    this.#component = component;
    this.#host = host;
  }

  record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.#inflight > 200) return; // shed Events under a storm rather than queue without bound
    const now = new Date().toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        generateName: `${target.name}.`,
        namespace: target.namespace,
      },
      involvedObject: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name: target.name,
        namespace: target.namespace,
        ...(target.uid ? { uid: target.uid } : {}),
        ...(target.resourceVersion ? { resourceVersion: target.resourceVersion } : {}),
      },
      type,
      reason,
      message: message.slice(0, 1024),
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: this.#component, host: this.#host },
      reportingComponent: this.#component,
      reportingInstance: this.#host,
    };
    this.#inflight++;
    this.#client
      .request('POST', `/api/v1/namespaces/${encodeURIComponent(target.namespace)}/events`, { body })
      .catch((err: unknown) =>
        this.#logger.debug({ msg: 'could not record event', reason, err: (err as Error).message }),
      )
      .finally(() => this.#inflight--);
  }
}
