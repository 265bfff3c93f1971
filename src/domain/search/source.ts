/**
 * The one interface every searched type implements, and the ranked query
 * most of them share (docs in openapi.yaml, `searchResources`).
 *
 * A type's query reads only columns that are shown by the type's own
 * endpoint: names, titles, e-mail addresses, prefixes. Sealed columns
 * (`config_enc`, `target_enc`, `secret_enc`, heartbeat tokens), hashes and
 * secrets are never named in a search query, so they can be neither matched
 * nor returned.
 */
import { sql, type RawBuilder } from 'kysely';
import type { components } from '../../../gen/openapi';
import type { Caller } from '../../auth/caller';
import type { Permission } from '../../auth/roles';
import type { Db } from '../../db/connect';

/** One hit as the API returns it. */
export type SearchHit = components['schemas']['SearchHit'];
/** The type identifiers of the contract (`SearchHit.type`). */
export type SearchType = SearchHit['type'];
/** Which field matched. */
export type MatchedField = SearchHit['matchedField'];

/** What to look for, prepared once per request. */
export interface Terms {
  /** `q` trimmed. */
  text: string;
  /** Fewer than three characters: only the start of the first field matches (no trigram to look up). */
  short: boolean;
  /** LIKE pattern (escaped) matching `text` anywhere. */
  contains: string;
  /** At most this many hits. */
  limit: number;
}

/** One searchable type. */
export interface SearchSource {
  /** The permission of the type's own list endpoint: without it the type is not searched. */
  permission: Permission;
  /** At most `terms.limit` hits, best first, of what the caller could read through the type's own endpoint. */
  search(db: Db, caller: Caller, terms: Terms): Promise<SearchHit[]>;
}

/**
 * Matches further inside a field are ranked among this many found per field
 * (in index order): beyond it a broad term would make every search read and
 * sort every matching row. Exact and prefix matches of the first field are
 * always found, through a btree index, whatever their number.
 */
export const CANDIDATES = 200;
/** Types ranked newest first also consider every title match among this many most recent records. */
export const RECENT = 2000;

/** `like` pattern matching `text` anywhere (LIKE's `\`, `%` and `_` escaped). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The caller's confinement as a condition on `column` (true when unconfined). */
export function inWorkspaces(caller: Caller, column: RawBuilder<unknown>): RawBuilder<boolean> {
  if (caller.workspaceIds === null) return sql<boolean>`true`;
  return sql<boolean>`${column} = any(${[...caller.workspaceIds]}::text[])`;
}

/** A second searched field of a type. */
export interface OtherField {
  field: MatchedField;
  /** The condition it matches on (uses `terms.contains`); skipped for a short `q` unless `short` is given. */
  match: (t: Terms) => RawBuilder<boolean>;
  /** CTEs `match` reads (`name as materialized (…)`), computed once for every arm. */
  with?: (t: Terms) => RawBuilder<unknown>;
  /** The same test on a row with its joins, where `match` is a costlier way to find candidates; default `match`. */
  test?: (t: Terms) => RawBuilder<boolean>;
  /** The condition for a short `q`, when the field is searched then too. */
  short?: (t: Terms) => RawBuilder<boolean>;
  /** What `snippet` shows. */
  snippet: (t: Terms) => RawBuilder<string | null>;
}

/** A type searched by its first field (name, title, e-mail) and maybe others. */
export interface RankedSpec {
  /** The table and its alias, e.g. ['monitors', 'm']. */
  table: [name: string, alias: string];
  /** Joins after it, for `title`, `columns` and snippets. */
  joins?: RawBuilder<unknown>;
  /**
   * The rows the caller may read: organisation and confinement. Only the
   * table's own columns, unless `filterJoins` (matches likewise): a capped
   * arm then finds its candidates in the table alone and joins them after,
   * so no join makes it read every match first.
   */
  visible: RawBuilder<boolean>;
  /** `visible` and the matches need the joins (small tables only, e.g. the memberships of one organisation). */
  filterJoins?: boolean;
  /** The first field; it is the hit's title. */
  title: RawBuilder<string>;
  /** Selects `id`, `subtitle` and `workspace_id`. */
  columns: RawBuilder<unknown>;
  others?: OtherField[];
  /** A timestamp: newest first within each rank step, and every title match among the newest RECENT rows is considered. */
  newest?: RawBuilder<Date>;
}

/** A row of a ranked search. */
export interface RankedRow {
  id: string; title: string; subtitle: string | null; workspace_id: string | null; snippet: string | null; matched: MatchedField;
}

/**
 * Runs a ranked search: rank 0 exact first field, 1 it starts with `q`
 * (alphabetical), 2 `q` inside it (shorter first), 3 another field; with
 * `newest`, newest first inside each rank. Arms, each filtered by `visible`:
 * the prefix range of the btree index, then (capped at CANDIDATES, and only
 * while fewer than `limit` were found before) the trigram matches of the
 * title and of each other field, then with `newest` the most recent rows.
 */
export async function rankedSearch(db: Db, spec: RankedSpec, t: Terms): Promise<RankedRow[]> {
  const title = sql`lower(${spec.title})`;
  const q = sql`lower(${t.text})`;
  const [name, alias] = spec.table;
  const from = sql`${sql.table(name)} ${sql.raw(alias)} ${spec.joins ?? sql``}`;
  const startsWith = sql<boolean>`starts_with(${title}, ${q})`;
  const inTitle = t.short ? startsWith : sql<boolean>`${title} like lower(${t.contains})`;
  const others = (spec.others ?? []).filter((o) => !t.short || o.short);
  const otherMatch = (o: OtherField) => (t.short ? o.short!(t) : o.match(t));
  const otherTest = (o: OtherField) => (t.short ? o.short!(t) : (o.test ?? o.match)(t));
  const rank = sql<number>`case when ${startsWith} then (case when ${title} = ${q} then 0 else 1 end) when ${inTitle} then 2 else 3 end`;
  const byOther = (pick: (o: OtherField) => RawBuilder<unknown>) => (others.length
    ? sql`case when ${inTitle} then null ${sql.join(others.map((o) => sql`when ${otherTest(o)} then ${pick(o)}`), sql` `)} end`
    : sql`null`);
  // One select list for every arm: a row found by several arms ranks by its best field.
  const row = sql`${rank} as rank, ${spec.title} as title, ${spec.columns}, ${byOther((o) => o.snippet(t))} as snippet,
    coalesce(${byOther((o) => sql`${o.field}::text`)}, 'title') as matched, ${spec.newest ?? sql`null::timestamptz`} as newest`;
  // A materialised CTE is planned without the LIMIT (a LIMIT would tempt the planner into a
  // sequential scan that finds nothing when few rows match) and still read only as far as needed.
  const capped = (match: RawBuilder<boolean>) => (spec.filterJoins
    ? sql`(with c as materialized (select ${row} from ${from} where ${spec.visible} and ${match}) select * from c limit ${CANDIDATES})`
    : sql`(select ${row} from (with c as materialized (select ${sql.raw(alias)}.* from ${sql.table(name)} ${sql.raw(alias)} where ${spec.visible} and ${match})
        select * from c limit ${CANDIDATES}) ${sql.raw(alias)} ${spec.joins ?? sql``})`);
  // Arms run as materialised CTEs, in turn; an arm that cannot change the top `limit` is not run at
  // all (its one-time filter is false): matches inside the title only when the prefix arm found too
  // few, other fields only when the title arms together did.
  const ctes: RawBuilder<unknown>[] = [];
  const shared = others.flatMap((o) => (o.with && !t.short ? [o.with(t)] : []));
  const arm = (body: RawBuilder<unknown>, gateOn: string[] = []) => {
    const cte = `a${ctes.length}`;
    const gate = gateOn.length
      ? sql` where (select count(distinct id) from (${sql.join(gateOn.map((g) => sql`select id from ${sql.raw(g)}`), sql` union all `)}) u) < ${t.limit}`
      : sql``;
    ctes.push(sql`${sql.raw(cte)} as materialized (select * from ${body} x${gate})`);
    return cte;
  };
  // The range lets the (organization_id, lower(title) text_pattern_ops) btree find prefixes in order.
  const titleArms = [arm(sql`(select ${row} from ${from}
      where ${spec.visible} and ${title} ~>=~ ${q} and ${title} ~<~ (${q} || chr(1114111)) and ${startsWith}
      order by ${title} using ~<~ ${spec.newest ? sql`, ${spec.newest} desc` : sql``} limit ${t.limit})`)];
  if (!t.short) titleArms.push(arm(capped(inTitle), titleArms));
  for (const o of others) arm(capped(otherMatch(o)), titleArms);
  if (spec.newest) {
    // The newest rows, whatever the indexes find first: recent title matches always rank. Joined once filtered.
    arm(sql`(select ${row} from (select * from (select * from ${sql.table(name)} ${sql.raw(alias)} where ${spec.visible}
      order by ${spec.newest} desc limit ${RECENT}) ${sql.raw(alias)} where ${inTitle}) ${sql.raw(alias)} ${spec.joins ?? sql``})`);
  }
  const order = spec.newest
    ? sql`rank, newest desc, lower(title) collate "C", id`
    : sql`rank, case when rank = 2 then length(title) end, lower(title) collate "C", id`;
  const all = ctes.map((_, i) => sql`select * from ${sql.raw(`a${i}`)}`);
  const { rows } = await sql<RankedRow>`
    with ${sql.join([...shared, ...ctes], sql`, `)}
    select id, title, subtitle, workspace_id, snippet, matched from (
      select distinct on (id) * from (${sql.join(all, sql` union all `)}) a order by id, rank
    ) d order by ${order} limit ${t.limit}`.execute(db);
  return rows;
}

/** Hits of ranked rows. */
export function hitsOf(type: SearchType, rows: RankedRow[], path: (id: string) => string): SearchHit[] {
  return rows.map((r) => ({
    type, id: r.id, title: r.title, subtitle: r.subtitle, snippet: r.matched === 'title' ? null : r.snippet,
    matchedField: r.matched, workspaceId: r.workspace_id, path: path(r.id),
  }));
}
