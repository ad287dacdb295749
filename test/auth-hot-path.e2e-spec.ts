import { hashToken } from '../src/auth/bearer-token';
import { TokenService } from '../src/auth/token.service';
import { signUp } from './helpers/accounts';
import { queriesDuring } from './helpers/logged-queries';
import { SmtpSink } from './helpers/smtp-sink';
import { createTestApp, TestApp } from './helpers/test-app';

/** The authenticated hot path: verify the JWT, find its record, load the user. */
describe('authentication cost', () => {
  const smtp = new SmtpSink();
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    await smtp.start();
    t = await createTestApp({ smtp });
    token = (await signUp(t, smtp, 'hot')).token;
  });
  afterAll(async () => {
    await t.close();
    await smtp.stop();
  });

  it('costs one SQL query per request', async () => {
    const queries = await queriesDuring(t.dataSource, async () => {
      // `me/` reads nothing beyond what the guard loaded, so every query is the guard's.
      const response = await t
        .http()
        .get('/api/v1/community-plugins/me/')
        .set('Authorization', `Bearer ${token}`);
      expect(response.status).toBe(200);
    });
    // The background workers (the outbox's poll, the plugin re-check and reconciler) may query
    // meanwhile; none of them reads the guard's tables.
    const requestQueries = queries.filter((query) => !/outbox_jobs|plugin_|audit_/.test(query));
    expect(requestQueries).toHaveLength(1);
    expect(requestQueries[0]).toMatch(/user_login_tokens/);
  });

  it('uses the unique token index and the users primary key', async () => {
    const [sql, parameters] = t.app.get(TokenService).ownerQuery(hashToken(token)).getQueryAndParameters();
    // One entry per step of the plan: 'indexed lookup', or the step itself when it is not one.
    const steps =
      t.config.database.type === 'mysql'
        ? (
            (await t.dataSource.query(`EXPLAIN ${sql}`, parameters)) as Array<{
              table: string;
              type: string;
              key: string | null;
              rows: number | string;
            }>
          ).map((step) =>
            ['const', 'eq_ref'].includes(step.type) && typeof step.key === 'string' && Number(step.rows) === 1
              ? 'indexed lookup'
              : JSON.stringify(step),
          )
        : (
            (await t.dataSource.query(`EXPLAIN QUERY PLAN ${sql}`, parameters)) as Array<{ detail: string }>
          ).map(({ detail }) =>
            /^SEARCH /.test(detail) && /USING (INTEGER PRIMARY KEY|INDEX)/.test(detail)
              ? 'indexed lookup'
              : detail,
          );
    expect(steps).toEqual(['indexed lookup', 'indexed lookup']);
  });
});
