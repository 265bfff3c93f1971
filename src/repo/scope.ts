/**
 * The workspace ids a confined view may match in an `in (…)` filter: null when
 * unconfined (no filter), and a list matching nothing when confined to none
 * (an empty `in ()` is not valid SQL).
 */
export function workspaceFilter(workspaceIds: readonly string[] | null): string[] | null {
  return workspaceIds === null ? null : workspaceIds.length ? [...workspaceIds] : [''];
}
