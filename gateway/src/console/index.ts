/**
 * The console API's public surface: the routes (app.ts), and the backends main.ts / embedded choose
 * from. The cluster backend (kube-backend.ts) is loaded by kubernetesConsole only when configured.
 */
export type { ConsoleBackend } from './backend.ts';
export { kubernetesConsole, kubernetesIdentities, readConsoleEnv } from './env.ts';
export { FolderConsoleBackend } from './folder-backend.ts';
export { consoleRoutes } from './routes.ts';
