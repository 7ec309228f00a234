/**
 * The playground's input for each request type a workflow may have, and the native /v1/ai body
 * built from it (the fields the gateway's request parser expects of that type).
 */
export interface TypedInput {
  system: string;
  /** The text of the request: the user message, the prompt, the input or the text to speak. */
  user: string;
  /** Vision: the image the message carries (an https: or data: URL). */
  imageUrl: string;
}

/** The label of the text field for each request type. */
export const TEXT_LABEL: Record<string, string> = {
  chat: 'User message',
  vision: 'User message',
  completion: 'Prompt',
  embedding: 'Input',
  image: 'Prompt',
  audio: 'Text to speak',
};

/** Whether the type's request carries a system message (the others get the workflow's instructions only). */
export const takesSystem = (type: string): boolean => type === 'chat' || type === 'vision';

/** The native body's type-specific part for `type`. */
export function typedBody(type: string, i: TypedInput): Record<string, unknown> {
  const system = i.system.trim() ? [{ role: 'system', content: i.system }] : [];
  switch (type) {
    case 'vision':
      return {
        messages: [
          ...system,
          {
            role: 'user',
            content: [
              { type: 'text', text: i.user },
              { type: 'image_url', image_url: { url: i.imageUrl } },
            ],
          },
        ],
      };
    case 'completion':
    case 'image':
      return { prompt: i.user };
    case 'embedding':
      return { input: i.user };
    case 'audio':
      // Speech: the text and a voice (a transcription needs a file, which the form does not take).
      return { input: i.user, voice: 'alloy' };
    default:
      return { messages: [...system, { role: 'user', content: i.user }] };
  }
}
