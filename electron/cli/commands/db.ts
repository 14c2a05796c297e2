/**
 * `waystation db init URL`: create the Waystation schema in a PostgreSQL
 * database, or migrate an older one to this build's version. A database of
 * LangGraph's checkpointer is refused (exit 2) with nothing created: the
 * store's migration checks first (pg-schema.ts, databaseKind).
 */
import type { Command } from 'commander';
import { openPostgresStore } from '../../store/postgres/postgres-store.js';
import { isPostgresUrl, redactUrl } from '../../store/postgres/redact-url.js';
import { UsageError, type CliContext } from '../cli-context.js';

export function register(program: Command, ctx: CliContext): void {
  const db = program.command('db').description('manage a PostgreSQL store');
  db.command('init')
    .description(
      'create the Waystation schema in a database (or migrate it to this version); safe to run again; a LangGraph checkpointer database is refused',
    )
    .argument('<URL>', 'postgres://user@host/database (the password from the URL, PGPASSWORD or ~/.pgpass)')
    .action(async (url: string) => {
      if (!isPostgresUrl(url)) throw new UsageError(`${url} is not a PostgreSQL URL (postgres://user@host/database)`);
      const store = openPostgresStore(url);
      try {
        const { from, to } = await store.init();
        const shown = redactUrl(url);
        ctx.io.out(
          from === to
            ? `${shown} already has the Waystation schema (version ${to}); nothing was changed\n`
            : from === 0
              ? `created the Waystation schema (version ${to}) in ${shown}\n`
              : `migrated ${shown} from schema version ${from} to ${to}\n`,
        );
      } finally {
        await store.close();
      }
    });
}
