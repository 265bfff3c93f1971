/**
 * Status pages with their settings and components (monitor ids in page
 * order), by creation. Never the page password (only `hasPassword`), the
 * domain verification token or the subscribers.
 */
import { sql } from 'kysely';
import { confined, isoOf, within, type ExportEntity } from '../entity';

export const statusPages: ExportEntity = {
  columns: [
    'id', 'name', 'slug', 'workspaceId', 'visibility', 'hasPassword', 'customDomain', 'domainVerifiedAt', 'headline', 'description',
    'logoUrl', 'customCss', 'themeAccent', 'language', 'historyDays', 'showResponseTimes', 'showIncidentHistory', 'subscribersEnabled',
    'hideServiceBranding', 'groupByHost', 'componentMonitorIds', 'createdAt', 'updatedAt',
  ],
  permission: 'status_page:read',
  hourly: false,
  time: 'creation (createdAt)',
  query: (db, scope) => db.selectFrom('status_pages as p')
    .select([
      'p.id', 'p.name', 'p.slug', 'p.workspace_id as workspaceId', 'p.visibility', sql<boolean>`p.password_hash is not null`.as('hasPassword'),
      'p.custom_domain as customDomain', isoOf('p.domain_verified_at').as('domainVerifiedAt'), 'p.headline', 'p.description',
      'p.logo_url as logoUrl', 'p.custom_css as customCss', 'p.theme_accent as themeAccent', 'p.language', 'p.history_days as historyDays',
      'p.show_response_times as showResponseTimes', 'p.show_incident_history as showIncidentHistory', 'p.subscribers_enabled as subscribersEnabled',
      'p.hide_service_branding as hideServiceBranding', 'p.group_by_host as groupByHost',
      sql<string[]>`array(select c.monitor_id from status_page_components c where c.page_id = p.id order by c.position, c.id)`.as('componentMonitorIds'),
      isoOf('p.created_at').as('createdAt'), isoOf('p.updated_at').as('updatedAt'),
    ])
    .where('p.organization_id', '=', scope.organizationId)
    .where(confined('p.workspace_id', scope))
    .where(within('p.created_at', scope))
    .orderBy('p.created_at').orderBy('p.id'),
};
