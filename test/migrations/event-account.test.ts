// The EventAccount migration on a database that already holds events: each takes its account (a
// tenant's reseller, else its own organization), so a reseller's feed across its tenants shows
// the events written before the upgrade too.
import { expect } from 'chai';
import { EventAccount1795860000000 } from '../../src/migrations/1795860000000-EventAccount.js';
import { withUpgrade } from '../helpers/upgrade.js';

describe('the EventAccount migration', () => {
  it('gives every existing event its account: the reseller for a tenant’s event, else its own organization', async function () {
    this.timeout(60_000);
    await withUpgrade('account', EventAccount1795860000000, async ({ before, upgraded }) => {
      await before.query(
        `INSERT INTO organizations (id, name, is_reseller) VALUES ('org_rs', 'Reseller', true), ('org_plain', 'Plain', false);
         INSERT INTO organizations (id, name, parent_id) VALUES ('ten_a', 'Tenant', 'org_rs')`,
      );
      await before.query(
        `INSERT INTO call_events (id, call_id, org_id, sequence, event, payload, occurred_at)
         SELECT 'evt_' || o, 'call_' || o, o, 1, 'call.queued', '{}', now() FROM unnest(ARRAY['org_rs', 'org_plain', 'ten_a']) AS o`,
      );
      await upgraded.runMigrations({ transaction: 'each' });
      const rows = await upgraded.query(`SELECT org_id, account_id FROM call_events ORDER BY org_id`);
      expect(rows).to.deep.equal([
        { org_id: 'org_plain', account_id: 'org_plain' },
        { org_id: 'org_rs', account_id: 'org_rs' },
        { org_id: 'ten_a', account_id: 'org_rs' },
      ]);
      await upgraded.undoLastMigration({ transaction: 'each' });
      expect((await upgraded.query(`SELECT count(*)::int AS n FROM call_events`))[0].n).to.equal(3);
    });
  });
});
