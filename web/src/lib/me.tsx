/** The signed-in person as `/me` describes them, and what they may do, for every page. */
import { createContext, useContext, useMemo, type ReactNode } from 'react';
import type { Schema } from './api';
import { permissionsOf, type Permission } from './permissions';

type Me = Schema<'Me'>;
/**
 * `confined`: the caller is limited to some workspaces (`membership.workspaceIds`),
 * so organisation-wide changes (renaming a host, an organisation-wide channel)
 * are refused to it whatever its permissions (403 `workspace_confined`).
 */
interface MeValue { me: Me; can: (p: Permission) => boolean; confined: boolean }

const MeContext = createContext<MeValue | null>(null);

export function MeProvider({ me, children }: { me: Me; children: ReactNode }) {
  const value = useMemo(() => {
    // A server that states the caller's permissions (`membership.permissions`) is taken at its word;
    // otherwise they are derived from the role and the key's scopes.
    const stated = (me.membership as { permissions?: unknown }).permissions;
    const perms = Array.isArray(stated) ? new Set(stated as Permission[]) : permissionsOf(me.membership.role, me.key?.scopes ?? []);
    return { me, can: (p: Permission) => perms.has(p), confined: me.membership.workspaceIds !== null };
  }, [me]);
  return <MeContext.Provider value={value}>{children}</MeContext.Provider>;
}

export function useMe(): MeValue {
  const v = useContext(MeContext);
  if (!v) throw new Error('useMe outside MeProvider');
  return v;
}
