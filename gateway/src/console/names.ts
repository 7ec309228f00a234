import { createHash } from 'node:crypto';

/**
 * Kubernetes allows 253; embedded mode keeps each workflow in a file named
 * console-<namespace>.<object name>.yaml, which must fit the file system's 255 bytes.
 */
const MAX_NAME = 170;
const HASH_CHARS = 16;

/**
 * The object name of a console workflow: a readable slug of project and API name, then a hash of
 * the pair. Project and API name joined by a dash alone would be ambiguous (project `alpha-eu` with
 * workflow `x` and project `alpha` with workflow `eu-x` are both `alpha-eu-x`), and several projects
 * share a namespace; the hash (of both, split by a character neither may hold) gives every pair its
 * own name. Deterministic, so two creates of one name race on the API server's AlreadyExists.
 */
export function objectNameFor(project: string, apiName: string): string {
  const hash = createHash('sha256').update(`${project}\n${apiName}`).digest('hex').slice(0, HASH_CHARS);
  const slug = `${project}-${apiName}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/[-.]{2,}/g, '-')
    .replace(/^[-.]+/, '')
    .slice(0, MAX_NAME - HASH_CHARS - 1)
    .replace(/[-.]+$/, '');
  return slug ? `${slug}-${hash}` : hash;
}

/** The config-folder file of a console workflow in embedded mode (one file per workflow). */
export const consoleFileName = (namespace: string, objectName: string): string =>
  `console-${namespace}.${objectName}.yaml`;
