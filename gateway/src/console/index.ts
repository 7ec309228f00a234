/** The console API's public surface: the routes (app.ts), and the backends main.ts / embedded choose from. */
export type { ConsoleBackend } from './backend.ts';
export { kubernetesConsole, readConsoleEnv } from './env.ts';
export { FolderConsoleBackend } from './folder-backend.ts';
export { KubeConsoleBackend } from './kube-backend.ts';
export { consoleRoutes } from './routes.ts';
