// The Anthropic SDK against `make run`: the workflow name is the model.
import Anthropic from '@anthropic-ai/sdk';

const client = new Anthropic({
  baseURL: 'http://localhost:8080',
  apiKey: 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v',
});
const message = await client.messages.create({
  model: 'support-chat',
  max_tokens: 512,
  messages: [{ role: 'user', content: 'Where is my order?' }],
});
console.log(message.content);

const { input_tokens } = await client.messages.countTokens({
  model: 'support-chat',
  messages: [{ role: 'user', content: 'Where is my order?' }],
});
console.log(input_tokens);
