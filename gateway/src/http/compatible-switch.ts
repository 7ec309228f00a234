import type { AuthContext } from '../auth/authenticate.ts';
import { GatewayError } from '../errors/index.ts';
import type { RuntimeWorkflow } from '../snapshot/runtime.ts';
import { authOf } from './context.ts';

/**
 * The caller of a compatible endpoint (OpenAI's chat, completions, embeddings, images, audio and
 * models; the Responses API; Anthropic's Messages API), once its project's one switch,
 * `spec.compatibleApi.enabled`, is found on. Off, every one of them answers 503 `feature_disabled`.
 */
export function compatibleAuth(req: { auth: AuthContext | null }): AuthContext {
  const auth = authOf(req);
  if (!auth.project.config.compatibleApiEnabled)
    throw new GatewayError(
      'feature_disabled',
      'The compatible APIs (OpenAI and Anthropic) are disabled for this project.',
      { hint: 'Set spec.compatibleApi.enabled: true on the Project.' },
    );
  return auth;
}

/** The workflow a compatible endpoint's `model` names; 404 `workflow_not_found` in its own words. */
export function modelWorkflow(auth: AuthContext, model: string): RuntimeWorkflow {
  const wf = auth.project.workflows.get(model);
  if (!wf)
    throw new GatewayError(
      'workflow_not_found',
      `The model "${model}" does not exist: no workflow of this project has that name.`,
      { param: 'model' },
    );
  return wf;
}
