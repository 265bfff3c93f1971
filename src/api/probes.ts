import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { listProbes } from '../domain/probes';

/** Private probes (created and revoked by operators with the CLI). */
export const probeHandlers = {
  listProbes: async (_i, ctx) => ({ data: await listProbes(ctx.db, ctx.caller) }),
} satisfies Partial<Handlers<Ctx>>;
