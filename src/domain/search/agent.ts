import type { SearchSource } from './source';

/**
 * Server agents: accepted as a type and answering no hits until the agents
 * table exists (agents are built on another branch). Then: name, confined by
 * workspace like GET /agents, path `/agents`.
 */
export const agent: SearchSource = {
  permission: 'agent:read',
  search: async () => [],
};
