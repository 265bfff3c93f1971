import { Kysely, Migrator, type Migration, type MigrationProvider } from 'kysely';
import * as m0001 from './migrations/0001_foundation';
import * as m0002 from './migrations/0002_incident_monitor_index';
import * as m0003 from './migrations/0003_engine';
import * as m0004 from './migrations/0004_alerting';
import * as m0005 from './migrations/0005_monitor_storage';
import * as m0006 from './migrations/0006_change_notifications';
import * as m0007 from './migrations/0007_status_pages';
import * as m0008 from './migrations/0008_members';
import * as m0009 from './migrations/0009_sessions';
import * as m0010 from './migrations/0010_sms_enrolments';
import * as m0011 from './migrations/0011_billing';
import * as m0012 from './migrations/0012_error_projects';
import * as m0013 from './migrations/0013_error_issues';
import * as m0014 from './migrations/0014_quiet_delivery_notes';
import * as m0015 from './migrations/0015_source_maps';
import * as m0016 from './migrations/0016_symbols';
import * as m0017 from './migrations/0017_error_alerts';
import * as m0018 from './migrations/0018_ping_buffer';
import * as m0019 from './migrations/0019_analytics';
import * as m0020 from './migrations/0020_error_event_text';
import * as m0021 from './migrations/0021_analytics_ingest';
import * as m0022 from './migrations/0022_analytics_drain';
import * as m0023 from './migrations/0023_agents';
import * as m0024 from './migrations/0024_search';
import * as m0026 from './migrations/0026_analytics_monthly';
import * as m0027 from './migrations/0027_ingest_rejected';
import * as m0028 from './migrations/0028_error_event_summary';
import * as m0029 from './migrations/0029_analytics_previous_visitor';
import * as m0030 from './migrations/0030_audit_actor_user';
import * as m0031 from './migrations/0031_monitor_schedule';
import * as m0032 from './migrations/0032_upload_chunks';
import * as m0033 from './migrations/0033_stream_events';
import * as m0034 from './migrations/0034_schedule_rotation_from';
import * as m0035 from './migrations/0035_audit_filters';

/** The migrations in order; names are stable once shipped. */
const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_incident_monitor_index': m0002,
  '0003_engine': m0003,
  '0004_alerting': m0004,
  '0005_monitor_storage': m0005,
  '0006_change_notifications': m0006,
  '0007_status_pages': m0007,
  '0008_members': m0008,
  '0009_sessions': m0009,
  '0010_sms_enrolments': m0010,
  '0011_billing': m0011,
  '0012_error_projects': m0012,
  '0013_error_issues': m0013,
  '0014_quiet_delivery_notes': m0014,
  '0015_source_maps': m0015,
  '0016_symbols': m0016,
  '0017_error_alerts': m0017,
  '0018_ping_buffer': m0018,
  '0019_analytics': m0019,
  '0020_error_event_text': m0020,
  '0021_analytics_ingest': m0021,
  '0022_analytics_drain': m0022,
  '0023_agents': m0023,
  '0024_search': m0024,
  '0026_analytics_monthly': m0026,
  '0027_ingest_rejected': m0027,
  '0028_error_event_summary': m0028,
  '0029_analytics_previous_visitor': m0029,
  '0030_audit_actor_user': m0030,
  '0031_monitor_schedule': m0031,
  '0032_upload_chunks': m0032,
  '0033_stream_events': m0033,
  '0034_schedule_rotation_from': m0034,
  '0035_audit_filters': m0035,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the schema up to date; throws (after a full rollback) if a migration fails. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Migrations this build knows that the database has not run (empty when the schema is current). */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const all = await new Migrator({ db, provider }).getMigrations();
  return all.filter((m) => !m.executedAt).map((m) => m.name);
}
