/**
 * "Copy as code": the playground's input as a program for each way of calling the gateway. The key
 * is never in them: each reads SWITCHYARD_API_KEY (and SWITCHYARD_URL) from the environment.
 */
export interface SnippetInput {
  workflow: string;
  system: string;
  user: string;
}

type Message = { role: 'system' | 'user'; content: string };

const messagesOf = (i: SnippetInput): Message[] => [
  ...(i.system ? [{ role: 'system' as const, content: i.system }] : []),
  { role: 'user', content: i.user },
];

/** A JSON string literal is also a valid Python and JavaScript string literal. */
const str = JSON.stringify;
const pyMessages = (m: Message[]) =>
  `[\n${m.map((x) => `        {"role": ${str(x.role)}, "content": ${str(x.content)}},`).join('\n')}\n    ]`;
const jsMessages = (m: Message[]) =>
  `[\n${m.map((x) => `    { role: ${str(x.role)}, content: ${str(x.content)} },`).join('\n')}\n  ]`;
/** Inside single quotes in a POSIX shell, only a single quote needs care. */
const shellQuoted = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const curl = (i: SnippetInput) =>
  `curl -sS "$SWITCHYARD_URL/v1/ai" \\
  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \\
  -H "Content-Type: application/json" \\
  -d ${shellQuoted(JSON.stringify({ workflow: i.workflow, messages: messagesOf(i), format: 'wrapped' }, null, 2))}`;

const pythonOpenai = (i: SnippetInput) => `import os
from openai import OpenAI

client = OpenAI(
    base_url=os.environ["SWITCHYARD_URL"] + "/v1",
    api_key=os.environ["SWITCHYARD_API_KEY"],
)
completion = client.chat.completions.create(
    model=${str(i.workflow)},  # the workflow's name
    messages=${pyMessages(messagesOf(i))},
)
print(completion.choices[0].message.content)`;

const jsOpenai = (i: SnippetInput) => `import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: \`\${process.env.SWITCHYARD_URL}/v1\`,
  apiKey: process.env.SWITCHYARD_API_KEY,
});
const completion = await client.chat.completions.create({
  model: ${str(i.workflow)}, // the workflow's name
  messages: ${jsMessages(messagesOf(i))},
});
console.log(completion.choices[0].message.content);`;

const anthropic = (i: SnippetInput) => `import os
import anthropic

client = anthropic.Anthropic(
    base_url=os.environ["SWITCHYARD_URL"],
    api_key=os.environ["SWITCHYARD_API_KEY"],
)
message = client.messages.create(
    model=${str(i.workflow)},  # the workflow's name
    max_tokens=1024,${i.system ? `\n    system=${str(i.system)},` : ''}
    messages=${pyMessages([{ role: 'user', content: i.user }])},
)
print(message.content[0].text)`;

const native = (i: SnippetInput) => `const res = await fetch(\`\${process.env.SWITCHYARD_URL}/v1/ai\`, {
  method: 'POST',
  headers: {
    authorization: \`Bearer \${process.env.SWITCHYARD_API_KEY}\`,
    'content-type': 'application/json',
  },
  body: JSON.stringify({
    workflow: ${str(i.workflow)},
    messages: ${jsMessages(messagesOf(i)).replaceAll('\n', '\n  ')},
    format: 'wrapped', // data, plus meta: the attempts, usage, cache
  }),
});
const { data, meta } = await res.json();`;

export const SNIPPETS: readonly { id: string; label: string; code: (i: SnippetInput) => string }[] = [
  { id: 'curl', label: 'curl (/v1/ai)', code: curl },
  { id: 'python', label: 'Python openai', code: pythonOpenai },
  { id: 'js', label: 'JS openai', code: jsOpenai },
  { id: 'anthropic', label: 'Anthropic SDK (Python)', code: anthropic },
  { id: 'native', label: 'fetch (/v1/ai native)', code: native },
];
