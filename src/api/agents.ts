import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { agentHours, agentMetrics, deleteAgent, enrollAgent, listAgents } from '../domain/agents';

/** Server agents and their samples (docs/agents.md). */
export const agentHandlers = {
  listAgents: async (_i, ctx) => ({ data: await listAgents(ctx.db, ctx.caller) }),
  enrollAgent: async ({ body }, ctx) => ({ data: await enrollAgent(ctx.db, ctx.caller, body) }),
  // The query wins when both name an agent (as for the other deletes by query or body).
  deleteAgent: async ({ query, body }, ctx) => ({ data: await deleteAgent(ctx.db, ctx.caller, query.id ?? body?.id) }),
  getAgentMetrics: async ({ path, query }, ctx) => ({ data: await agentMetrics(ctx.db, ctx.caller, path.id, query, ctx.now) }),
  getAgentHourlyMetrics: async ({ path, query }, ctx) => ({ data: await agentHours(ctx.db, ctx.caller, path.id, query, ctx.now) }),
} satisfies Partial<Handlers<Ctx>>;
