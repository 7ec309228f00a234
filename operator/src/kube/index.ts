/**
 * The operator's Kubernetes REST client, for other packages that talk to the same API server (the
 * gateway's console API writes Workflows with it): one client, one authentication and TLS setup.
 */
export {
  isAlreadyExists,
  isConflict,
  isNotFound,
  KubeClient,
  KubeError,
  type KubeObject,
  loadKubeConfig,
  type WatchEvent,
} from './client.ts';
