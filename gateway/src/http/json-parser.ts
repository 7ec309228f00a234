import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import { jsonTooDeep } from '../json/depth.ts';

type Done = (err: Error | null, body?: unknown) => void;

/**
 * JSON request bodies, parsed with Fastify's parser (which refuses `__proto__` and
 * `constructor.prototype` keys) after their nesting depth is checked on the text: a body nested
 * deeper than `maxDepth` is refused with 400 before anything walks it (see json/depth.ts).
 *
 * `curl -d '{...}'` labels JSON as a form, and some clients send text/plain: a JSON body under
 * those labels is read the same way rather than refused.
 */
export function installJsonParsers(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  const bounded = (req: FastifyRequest, body: string, done: Done): void => {
    if (body.length === 0 && req.routeOptions.config.bodyOptional === true) {
      done(null, undefined);
      return;
    }
    if (jsonTooDeep(body, maxDepth)) {
      done(
        new GatewayError(
          'invalid_request',
          `The request body nests objects and arrays more than ${maxDepth} levels deep.`,
          { hint: `Send JSON nested at most ${maxDepth} levels deep.` },
        ),
      );
      return;
    }
    parse(req, body, done);
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, bounded);
  app.addContentTypeParser(
    ['application/x-www-form-urlencoded', 'text/plain'],
    { parseAs: 'string' },
    bounded,
  );
}
