import { createHash } from 'node:crypto';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MAX_NAME = 253;

/**
 * The object name of a console workflow: `<project>-<api name>` when that is a valid Kubernetes
 * name, else a lowercased slug plus a hash of the API name (API names may hold capitals, `/`, `:`).
 * Deterministic, so two creates of one name race on the API server's AlreadyExists, not on us.
 * The project is part of it because several projects may share a namespace.
 */
export function objectNameFor(project: string, apiName: string): string {
  const plain = `${project}-${apiName}`;
  if (plain.length <= MAX_NAME && DNS_SUBDOMAIN.test(plain)) return plain;
  const hash = createHash('sha256').update(apiName).digest('hex').slice(0, 10);
  const slug = apiName
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/[-.]{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  const head = `${project}-${slug}`.slice(0, MAX_NAME - hash.length - 1).replace(/[-.]+$/, '');
  return `${head}-${hash}`;
}

/** The config-folder file of a console workflow in embedded mode (one file per workflow). */
export const consoleFileName = (namespace: string, objectName: string): string =>
  `console-${namespace}.${objectName}.yaml`;
