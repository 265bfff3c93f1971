/** The signed-in person as `/me` describes them, and what they may do, for every page. */
import { createContext, useContext, useMemo, type ReactNode } from 'react';
import type { Schema } from './api';
import type { Permission } from './permissions';

export type Me = Schema<'Me'>;
interface MeValue {
  me: Me;
  /** True when the caller holds `p` (in its workspaces, when confined). */
  can: (p: Permission) => boolean;
  /** True when the caller is confined to some workspaces (organisation-wide changes are refused to it). */
  confined: boolean;
}

const MeContext = createContext<MeValue | null>(null);

export function MeProvider({ me, children }: { me: Me; children: ReactNode }) {
  const value = useMemo(() => {
    const perms = new Set<string>(me.membership.permissions);
    return { me, can: (p: Permission) => perms.has(p), confined: me.membership.workspaceIds != null };
  }, [me]);
  return <MeContext.Provider value={value}>{children}</MeContext.Provider>;
}

export function useMe(): MeValue {
  const v = useContext(MeContext);
  if (!v) throw new Error('useMe outside MeProvider');
  return v;
}
