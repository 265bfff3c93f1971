import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import type { Me } from '../../lib/me';

/**
 * The sections of Settings, in the order of its navigation: one entry each,
 * so a new section is one line here (its page loads on first use). `shown`
 * hides a section from those who could do nothing there (the server still
 * refuses what they may not do).
 */
export interface SettingsSection {
  path: string;
  title: string;
  page: LazyExoticComponent<ComponentType>;
  shown?: (me: Me) => boolean;
}

export const SECTIONS: SettingsSection[] = [
  { path: 'account', title: 'My account', page: lazy(() => import('./Account')) },
  { path: 'members', title: 'Members', page: lazy(() => import('./Members')), shown: (me) => me.membership.permissions.includes('member:read') },
  { path: 'workspaces', title: 'Workspaces', page: lazy(() => import('./Workspaces')), shown: (me) => me.membership.permissions.includes('workspace:read') },
  { path: 'api-keys', title: 'API keys', page: lazy(() => import('./ApiKeys')), shown: (me) => me.membership.permissions.includes('api_key:read') },
  { path: 'audit-log', title: 'Audit log', page: lazy(() => import('./AuditLog')), shown: (me) => me.membership.permissions.includes('audit_log:read') || !me.entitlements.auditLogIncluded },
  { path: 'export', title: 'Export', page: lazy(() => import('./Export')), shown: (me) => ['monitor:read', 'incident:read', 'status_page:read', 'notification_channel:read', 'member:read', 'audit_log:read'].some((p) => me.membership.permissions.includes(p)) },
  { path: 'billing', title: 'Billing', page: lazy(() => import('./Billing')), shown: (me) => me.membership.permissions.includes('billing:read') },
];
