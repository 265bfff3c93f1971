import { sql } from 'kysely';
import { CANDIDATES, inWorkspaces, type SearchSource } from './source';

/** Characters of a postmortem shown around the first matching word. */
const EXCERPT = 200;
const BEFORE = 60;

/**
 * `q` as a tsquery: each of its words (as PostgreSQL's `simple` parser splits
 * them) must start a word of the text. Quoted for the tsquery syntax, so no
 * input can make it fail.
 */
const tsquery = (text: string) => sql`(select string_agg('''' || replace(replace(l, '\\', '\\\\'), '''', '''''') || ''':*', ' & ')
  from unnest(tsvector_to_array(to_tsvector('simple', ${text}))) l)::tsquery`;

/**
 * Postmortems by the words of their text (full-text index on
 * `to_tsvector('simple', postmortem_body)`, migration 0024); the hit is the
 * incident (id, title, path). Newest incident first among the first
 * CANDIDATES matches the index finds.
 */
export const postmortem: SearchSource = {
  permission: 'incident:read',
  async search(db, caller, t) {
    const visible = sql`i.organization_id = ${caller.organizationId} and ${inWorkspaces(caller, sql`i.workspace_id`)}`;
    const matches = sql`to_tsvector('simple', i.postmortem_body) @@ (select tq from q)`;
    const first = /[\p{L}\p{N}]+/u.exec(t.text)?.[0] ?? t.text;
    const { rows } = await sql<{ id: string; title: string; subtitle: string; workspace_id: string; at: number; body: string }>`
      with q as (select ${tsquery(t.text)} as tq)
      select id, title, subtitle, workspace_id, at, body from (select * from (
        -- Materialised: planned without the LIMIT, read only as far as it needs.
        with c as materialized (select i.id, i.started_at from incidents i
          where ${visible} and i.postmortem_body is not null and ${matches})
        select * from c limit ${CANDIDATES}
      ) d0 order by started_at desc, id limit ${t.limit}
      ) d join lateral (
        select i.title, i.status || ' · postmortem by ' || coalesce(i.postmortem_author, 'unknown') as subtitle, i.workspace_id,
          strpos(lower(i.postmortem_body), lower(${first})) as at,
          substr(i.postmortem_body, greatest(strpos(lower(i.postmortem_body), lower(${first})) - ${BEFORE}, 1), ${EXCERPT + 1}) as body
        from incidents i where i.id = d.id) x on true
      order by d.started_at desc, d.id limit ${t.limit}`.execute(db);
    return rows.map((r) => {
      // `body` starts at most BEFORE characters before the word; the cut says whether text precedes it.
      const cutBefore = r.at > BEFORE + 1;
      const cutAfter = r.body.length > EXCERPT;
      const text = r.body.slice(0, EXCERPT).replace(/\s+/g, ' ').trim();
      return {
        type: 'postmortem' as const, id: r.id, title: r.title, subtitle: r.subtitle,
        snippet: `${cutBefore ? '…' : ''}${text}${cutAfter ? '…' : ''}`,
        matchedField: 'body' as const, workspaceId: r.workspace_id, path: `/incidents/${r.id}`,
      };
    });
  },
};
