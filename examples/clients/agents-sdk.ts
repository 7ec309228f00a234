// The OpenAI Agents SDK with its default settings (the Responses API) and one tool, against `make run`.
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

setTracingDisabled(true); // traces would otherwise go to OpenAI
setDefaultOpenAIClient(
  new OpenAI({ baseURL: 'http://localhost:8080/v1', apiKey: 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v' }),
);

const orderStatus = tool({
  name: 'order_status',
  description: 'The delivery status of an order.',
  parameters: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => `Order ${order_id} left the warehouse this morning.`,
});

const agent = new Agent({
  name: 'Support',
  instructions: 'Look the order up, then answer.',
  model: 'support-chat', // the workflow name
  tools: [orderStatus],
});
const result = await run(agent, 'Where is order A-17?');
console.log(result.finalOutput);
