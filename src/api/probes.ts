import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createProbeFor, listProbes, renameProbe, revokeProbeFor } from '../domain/probes';

/** Private probes (also created and revoked by operators with the CLI, through the same domain writes). */
export const probeHandlers = {
  listProbes: async (_i, ctx) => ({ data: await listProbes(ctx.db, ctx.caller) }),
  createProbe: async ({ body }, ctx) => ({ data: await createProbeFor(ctx.db, ctx.caller, body) }),
  updateProbe: async ({ path, body }, ctx) => ({ data: await renameProbe(ctx.db, ctx.caller, path.id, body) }),
  revokeProbe: async ({ path }, ctx) => ({ data: await revokeProbeFor(ctx.db, ctx.caller, path.id) }),
} satisfies Partial<Handlers<Ctx>>;
