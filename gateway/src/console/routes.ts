import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import { authOf } from '../http/context.ts';
import { type ConsoleBackend, type ConsoleProject, projectOf, WorkflowRefusedError } from './backend.ts';
import { bodyField, readWorkflowBody } from './body.ts';
import { workflowView } from './view.ts';

type Params = { project_id: string; name?: string };

/**
 * The console API: workflows of the caller's project, for keys with the `console` scope (app.ts
 * checks the scope: 403 without it). Any project but the key's own is 404, whether it exists or
 * not, so the API never tells which projects exist. Outside the /v1 prefixes, and kept out of
 * request logs (no `surface`).
 */
export function consoleRoutes(app: FastifyInstance, backend: ConsoleBackend | undefined): void {
  const config = { scope: 'console' } as const;
  const base = '/api/console/projects/:project_id/workflows';

  const open = (
    req: FastifyRequest<{ Params: Params }>,
  ): { backend: ConsoleBackend; project: ConsoleProject } => {
    const auth = authOf(req);
    const id = req.params.project_id;
    if (id !== auth.project.config.id) throw new GatewayError('not_found', `Project "${id}" not found.`);
    if (!backend)
      throw new GatewayError('feature_disabled', 'The console API is not enabled on this gateway.', {
        hint: 'Start the gateway with SWITCHYARD_CONSOLE=kubernetes (on a cluster) or use embedded mode.',
      });
    return { backend, project: projectOf(id, auth.project.config) };
  };

  const notFound = (p: ConsoleProject, name: string) =>
    new GatewayError('workflow_not_found', `Workflow "${name}" not found in project ${p.id}.`);

  app.post<{ Params: Params }>(base, { config }, async (req, reply) => {
    const { backend, project } = open(req);
    const body = readWorkflowBody(req.body);
    const result = await backend
      .create(project, { projectRef: { name: project.name }, ...body.spec })
      .catch(refusal(body.flatBackups));
    void reply.code(result.settled ? 201 : 202);
    return workflowView(project.id, result.record);
  });

  app.get<{ Params: Params }>(base, { config }, async (req) => {
    const { backend, project } = open(req);
    const records = await backend.list(project);
    return { object: 'list', data: records.map((r) => workflowView(project.id, r)) };
  });

  app.get<{ Params: Params }>(`${base}/:name`, { config }, async (req) => {
    const { backend, project } = open(req);
    const name = req.params.name ?? '';
    const record = await backend.get(project, name);
    if (!record) throw notFound(project, name);
    return workflowView(project.id, record);
  });

  app.put<{ Params: Params }>(`${base}/:name`, { config }, async (req, reply) => {
    const { backend, project } = open(req);
    const body = readWorkflowBody(req.body, req.params.name ?? '');
    const result = await backend
      .replace(project, { projectRef: { name: project.name }, ...body.spec })
      .catch(refusal(body.flatBackups));
    void reply.code(result.settled ? 200 : 202);
    return workflowView(project.id, result.record);
  });

  app.delete<{ Params: Params }>(`${base}/:name`, { config }, async (req, reply) => {
    const { backend, project } = open(req);
    await backend.delete(project, req.params.name ?? '');
    return reply.code(204).send();
  });
}

/** A refusal by the Workflow schema, the API server or the compiler: 422 naming the field the client sent. */
const refusal =
  (flatBackups: boolean) =>
  (err: unknown): never => {
    if (!(err instanceof WorkflowRefusedError)) throw err;
    const param = err.specPath === undefined ? undefined : bodyField(err.specPath, flatBackups);
    // A schema message that starts with the spec path speaks the client's words instead.
    const message =
      err.specPath !== undefined && param !== undefined && err.message.startsWith(`${err.specPath}: `)
        ? `${param}: ${err.message.slice(err.specPath.length + 2)}`
        : err.message;
    throw new GatewayError('invalid_workflow', `${err.reason}: ${message}`, {
      param,
      hint: 'Nothing was changed; fix the field and send the workflow again.',
    });
  };
