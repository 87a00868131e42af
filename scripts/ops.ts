// The operator's command line: the admin API's actions (CONTRACT.md §3) straight against the
// database, printing JSON.  npm run -s ops -- --help
import { Presets, SingleBar } from 'cli-progress';
import { Command, Option } from 'commander';
import Joi from 'joi';
import { timeInput } from '../src/http/schemas.js';
import { validate } from '../src/http/validate.js';
import type { Micros } from '../src/lib/money.js';
import { createRedis, waitForRedis } from '../src/lib/redis.js';
import { createRuntime, openDatabase, type Runtime } from '../src/runtime.js';
import type { FailedFilter } from '../src/webhooks/delivery-log.repository.js';
import { balanceAdjustmentSchema, createMemberSchema, createOrgSchema, updateOrgSchema } from '../src/orgs/orgs.schemas.js';
import type { CreateOrgInput, UpdateOrgInput } from '../src/orgs/orgs.service.js';
import type { Capability } from '../src/auth/capabilities.js';

interface OrgFlags {
  name?: string;
  timezone?: string;
  reseller?: boolean;
  tenantLimit?: string;
  maxConcurrentCalls?: string;
  maxCallsPerHour?: string;
  perMinute?: string;
  perText?: string;
  balance?: string;
  currency?: string;
  lowBalanceThreshold?: string;
}

/** Flags → the admin API's request body, so both are validated by the same schema. */
function orgBody(flags: OrgFlags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const int = (v: string) => (/^-?\d+$/.test(v) ? Number(v) : v);
  if (flags.name !== undefined) body.name = flags.name;
  if (flags.timezone !== undefined) body.timezone = flags.timezone;
  if (flags.reseller !== undefined) body.reseller = flags.reseller;
  if (flags.tenantLimit !== undefined) body.tenant_limit = int(flags.tenantLimit);
  const ceiling = {
    max_concurrent_calls: flags.maxConcurrentCalls && int(flags.maxConcurrentCalls),
    max_calls_per_hour: flags.maxCallsPerHour && int(flags.maxCallsPerHour),
  };
  if (Object.values(ceiling).some((v) => v !== undefined)) body.ceiling = JSON.parse(JSON.stringify(ceiling));
  const rates = { per_minute: flags.perMinute, per_text: flags.perText };
  if (Object.values(rates).some((v) => v !== undefined)) body.rates = JSON.parse(JSON.stringify(rates));
  if (flags.balance !== undefined) body.balance = flags.balance;
  if (flags.currency !== undefined) body.currency = flags.currency;
  if (flags.lowBalanceThreshold !== undefined) body.low_balance_threshold = flags.lowBalanceThreshold === 'none' ? null : flags.lowBalanceThreshold;
  return body;
}

function withOrgSettings(command: Command): Command {
  return command
    .addOption(new Option('--reseller [bool]', 'reseller access').argParser((v) => v !== 'false'))
    .option('--tenant-limit <n>', 'how many tenants a reseller may have')
    .option('--max-concurrent-calls <n>', "outbound limit (and tenants' ceiling)")
    .option('--max-calls-per-hour <n>', "outbound limit (and tenants' ceiling)")
    .option('--per-minute <amount>', 'call rate, per minute, billed per started second')
    .option('--per-text <amount>', 'rate per text');
}

async function run(action: (services: Runtime['services']) => Promise<unknown>): Promise<void> {
  const db = openDatabase();
  const redis = createRedis('command');
  const runtime = createRuntime({ db, redis });
  try {
    await Promise.all([db.initialize(), waitForRedis(redis, 5000)]);
    process.stdout.write(`${JSON.stringify(await action(runtime.services), null, 2)}\n`);
  } catch (err) {
    const e = err as { code?: string; message: string; extra?: unknown };
    process.stderr.write(`${JSON.stringify({ error: { code: e.code ?? 'error', message: e.message, ...(e.extra as object) } }, null, 2)}\n`);
    process.exitCode = 1;
  } finally {
    await runtime.close();
    if (db.isInitialized) await db.destroy();
    redis.disconnect();
  }
}

const retryFilterSchema = Joi.object({
  endpointId: Joi.string().max(40),
  orgId: Joi.string().max(40),
  since: timeInput().custom((value: string) => new Date(value)),
  until: timeInput().custom((value: string) => new Date(value)),
}).or('endpointId', 'orgId', 'since', 'until');

const program = new Command('ops').description('Ringlane operator commands; each prints JSON.');

withOrgSettings(
  program
    .command('orgs:create')
    .description('create an organization with an owner member and an API key holding every capability')
    .requiredOption('--name <name>', 'organization name')
    .option('--timezone <zone>', 'IANA time zone', 'UTC')
    .option('--balance <amount>', 'opening balance, e.g. 100.00')
    .option('--currency <code>', 'ISO 4217 currency', 'USD'),
).action((flags: OrgFlags) => run(({ orgs }) => orgs.createOrg(validate<CreateOrgInput>(createOrgSchema, orgBody(flags), 'body'))));

program
  .command('orgs:show')
  .description('show an organization')
  .argument('<org_id>')
  .action((id: string) => run(({ orgs }) => orgs.getOrg(id)));

withOrgSettings(
  program
    .command('orgs:update')
    .description('change reseller access, tenant limit, ceiling, rates or the low-balance threshold')
    .argument('<org_id>')
    .option('--low-balance-threshold <amount>', 'balance.low is sent when the balance falls below this; "none" unsets it'),
).action((id: string, flags: OrgFlags) => run(({ orgs }) => orgs.updateOrg(id, validate<UpdateOrgInput>(updateOrgSchema, orgBody(flags), 'body'))));

program
  .command('orgs:balance')
  .description("credit (or, negative, debit) an organization's balance")
  .argument('<org_id>')
  .argument('<amount>', 'decimal amount, e.g. 25.00 or -3.50')
  .action((id: string, amount: string) =>
    run(({ orgs }) => orgs.adjustBalance(id, validate<{ amount: Micros }>(balanceAdjustmentSchema, { amount }, 'body').amount)),
  );

program
  .command('members:add')
  .description('add a member (and an API key with the same capabilities)')
  .argument('<org_id>')
  .requiredOption('--email <email>')
  .requiredOption('--capabilities <list>', 'comma-separated: operate,settings,api_keys,webhooks')
  .option('--password <password>', 'lets the member sign in with POST /v1/sessions')
  .action((id: string, flags: { email: string; capabilities: string; password?: string }) =>
    run(({ orgs }) => {
      const body = { email: flags.email, capabilities: flags.capabilities.split(',').filter(Boolean), ...(flags.password ? { password: flags.password } : {}) };
      return orgs.addMember(id, validate<{ email: string; capabilities: Capability[]; password?: string }>(createMemberSchema, body, 'body'));
    }),
  );

program
  .command('webhooks:retry-failed')
  .description('send failed webhook deliveries again (by endpoint, organization, creation time); progress on stderr')
  .option('--endpoint <endpoint_id>')
  .option('--org <org_id>')
  .option('--since <time>', 'ISO 8601 UTC ending in Z, deliveries created at or after')
  .option('--until <time>', 'ISO 8601 UTC ending in Z, deliveries created before')
  .action((flags: { endpoint?: string; org?: string; since?: string; until?: string }) =>
    run(async ({ webhookDeliveries: deliveries }) => {
      const filter = validate<FailedFilter>(
        retryFilterSchema,
        {
          endpointId: flags.endpoint,
          orgId: flags.org,
          since: flags.since,
          until: flags.until,
        },
        'query',
      );
      const total = await deliveries.countFailed(filter);
      const bar = new SingleBar({ stream: process.stderr, format: 'retrying failed deliveries [{bar}] {value}/{total} {percentage}%' }, Presets.shades_classic);
      bar.start(total, 0);
      const queued = await deliveries.retryFailed(filter, (n) => bar.increment(n));
      bar.stop();
      return { matched: total, queued };
    }),
  );

// `npm run ops` without -s prints npm's banner ahead of the JSON: say how to get the JSON alone.
const viaNoisyNpm = process.env.npm_lifecycle_event === 'ops' && process.env.npm_config_loglevel !== 'silent';
if (viaNoisyNpm && !process.stdout.isTTY) {
  process.stderr.write('ops: npm printed its "> ringlane@... ops" banner on stdout before this JSON; run `npm run -s ops -- ...` to pipe the JSON alone\n');
}

await program.parseAsync(process.argv);
