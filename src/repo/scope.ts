import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * The workspace ids a confined view may match in an `in (…)` filter: null when
 * unconfined (no filter), and a list matching nothing when confined to none
 * (an empty `in ()` is not valid SQL).
 */
export function workspaceFilter(workspaceIds: readonly string[] | null): string[] | null {
  return workspaceIds === null ? null : workspaceIds.length ? [...workspaceIds] : [''];
}

/**
 * Rows that belong to the whole organisation (`column` null) or to one of a
 * confined caller's workspaces — the visibility of channels, agents and
 * on-call rows; true when unconfined.
 */
export function orgWideOrInWorkspaces(workspaceIds: readonly string[] | null, column: RawBuilder<unknown>): RawBuilder<SqlBool> {
  const ids = workspaceFilter(workspaceIds);
  return ids === null ? sql<SqlBool>`true` : sql<SqlBool>`(${column} is null or ${column} = any(${sql.val(ids)}::text[]))`;
}
