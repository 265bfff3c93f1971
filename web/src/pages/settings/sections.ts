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
  { path: 'billing', title: 'Billing', page: lazy(() => import('./Billing')), shown: (me) => me.membership.permissions.includes('billing:read') },
];
