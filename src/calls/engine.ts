import type { DataSource, EntityManager } from 'typeorm';
import { callBillable, callCharge } from '../billing/charges.js';
import type { LedgerLine } from '../billing/ledger.js';
import type { LedgerRepository } from '../billing/ledger.repository.js';
import type { CarrierAdapter, CarrierReport, ScheduledReport } from '../carrier/carrier.js';
import type { Carriers } from '../carrier/carriers.js';
import type { ConfirmationTexts } from '../messaging/texts.js';
import type { OrganizationsRepository } from '../orgs/organizations.repository.js';
import type { SpendLimits } from '../tenants/spend-limit.js';
import type { EndReason, TerminalStatus } from './call.entity.js';
import { effectiveLimits, type CallLimits } from './call-limits.js';
import type { CallJobs } from './calls.jobs.js';
import type { CallsRepository, DialedCall, EndedCall } from './calls.repository.js';

/**
 * How long a dispatch waits for more calls before admitting (see `CallEngine.dispatch`): the dial
 * of a call is this much later, its events are not (they carry the carrier's times), and the calls
 * of every organization placed meanwhile go through the engine as one batch.
 */
export const DISPATCH_GATHER_MS = 50;

/** The most organizations one pass of a dispatch admits for (and reads in one statement). */
const DISPATCH_ORGS = 500;

/** Hooks other domains attach to calls' ends: `during` runs in the ending transaction, `after` after commit. */
export interface CallEndHooks {
  during(em: EntityManager, calls: EndedCall[]): Promise<void>;
  after(calls: EndedCall[]): Promise<void>;
}

/** How a call ends: by the carrier, or on our side (canceled, tenant disabled). */
export interface EndRequest {
  status: TerminalStatus;
  endReason: EndReason;
  at: Date;
  /** Seconds to bill: the carrier's; when absent, the seconds in progress up to `at`. */
  durationSeconds?: number;
}

/**
 * The call engine: admits queued calls within their organization's limits, hands them to
 * the carrier, and applies the carrier's reports as status changes. It works on batches of
 * calls (those admitted together share their carrier reports), every status change and its
 * events are one statement or one transaction, and every step is idempotent: a job that runs
 * twice (a worker killed mid-job) changes nothing the second time and charges nothing twice.
 *
 * THE lock order, of every transaction and statement that locks rows of calls, organizations or the
 * ledger, so that none waits in a cycle: calls by id, then organizations by id, then the ledger. An
 * ending locks its calls first (`CallsRepository.lockOpen`), then the tenants with a spend limit it
 * charges (`SpendLimits.charging`), and appends its ledger lines last (`LedgerRepository.append`:
 * the balance trigger locks the payers' rows by id); a dial locks its calls, then share-locks their
 * tenants' rows (`CallsRepository.markDialed`, so a tenant disabled meanwhile dials nothing; within
 * a spend limit first in `dialWithinSpendLimit`); a statement changing several calls locks them by
 * id before its UPDATE (`ORDER BY id FOR NO KEY UPDATE` in `CallsRepository.markDialed` and in
 * `markRinging`, `markInProgress`, `markEnded`). Anything else that writes or locks an
 * organization's row (its settings or limits, a top-up, a tenant disabled) takes that one row and
 * waits for nothing after it; foreign key checks (a call placed, a line appended) only key-share
 * lock organizations, which waits for those alone.
 */
export class CallEngine {
  constructor(
    private readonly db: DataSource,
    private readonly calls: CallsRepository,
    /** Whose calls they are and who pays for them: their limits, their rates. */
    private readonly orgs: Pick<OrganizationsRepository, 'byIds' | 'dialingOf'>,
    readonly limits: CallLimits,
    readonly jobs: CallJobs,
    /** Each organization's carrier: the engine knows carriers only by their interface. */
    private readonly carriers: Pick<Carriers, 'ofOrg' | 'get'>,
    private readonly texts: ConfirmationTexts,
    /** Where the ending's charges are appended (the billing domain's ledger). */
    private readonly ledger: Pick<LedgerRepository, 'append'>,
    /** What other domains do when calls end; given at construction, so no path that ends a call can skip them. */
    private readonly hooks: readonly CallEndHooks[],
    /** Tenants' monthly spend limits: checked at the dial, followed by the endings that charge them. */
    private readonly spend: Pick<SpendLimits, 'month' | 'lockForDial' | 'charging' | 'recordThresholds'>,
  ) {}

  /** Outbound calls just committed as `queued`: queue them for admission. */
  async submitOutbound(orgId: string, calls: Array<{ id: string; createdAt: Date }>): Promise<void> {
    // Issued together they share one round trip; Redis runs them in this order.
    await Promise.all([this.limits.enqueue(orgId, calls), this.jobs.dispatch([orgId])]);
  }

  /**
   * Admits what each organization's limits allow, in creation order, and dials it: the
   * organizations whose dispatch was requested, and `orgId` (a delayed dispatch's). It first
   * gathers for DISPATCH_GATHER_MS: calls placed meanwhile, by any organization, find this dispatch
   * pending and join its batch, so calls are dialed, reported, ended and charged in batches (one
   * statement and one job for many calls) however many organizations place them: a reseller's
   * hundred tenants placing two calls a second each batch as well as one organization placing two
   * hundred.
   */
  async dispatch(orgId?: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, DISPATCH_GATHER_MS));
    let orgIds = await this.jobs.takeRequested(DISPATCH_ORGS);
    // More requested than one pass takes: the rest is taken pass by pass.
    let more = orgIds.length === DISPATCH_ORGS;
    if (orgId && !orgIds.includes(orgId)) orgIds.push(orgId);
    while (orgIds.length > 0) {
      const full = await this.admitAndDial(orgIds);
      const next = more ? await this.jobs.takeRequested(DISPATCH_ORGS) : [];
      more = next.length === DISPATCH_ORGS;
      orgIds = [...new Set([...full, ...next])];
    }
  }

  /**
   * One pass of a dispatch: each organization's admission (one script each, issued together), then
   * one dial for the calls of all of them; a tenant with a spend limit is dialed on its own (its
   * row locked for the check). Returns the organizations whose batch was full: more of their calls
   * may be admissible now. Taken from the requests, the organizations are requested again if the
   * pass fails (Redis or Postgres away), so the job's retry, or the next dispatch, serves them.
   */
  private async admitAndDial(orgIds: string[]): Promise<string[]> {
    try {
      const contexts = await this.orgs.dialingOf(orgIds);
      // A disabled tenant dials nothing.
      const enabled = [...contexts].filter(([, org]) => !org.disabled);
      const admissions = await Promise.all(enabled.map(([id, org]) => this.limits.admit(id, effectiveLimits(org))));
      const carriers = new Map(enabled.map(([id, org]) => [id, this.carriers.get(org.carrierProvider)]));
      const batch: string[] = [];
      const full: string[] = [];
      for (const [i, [id, org]] of enabled.entries()) {
        const admission = admissions[i];
        if (admission.retryAt) await this.jobs.dispatchLater(id, admission.retryAt.getTime() - Date.now());
        if (admission.full) full.push(id);
        if (org.spendLimited) await this.dial(admission.callIds, carriers, id);
        else batch.push(...admission.callIds);
      }
      await this.dial(batch, carriers);
      return full;
    } catch (err) {
      // Redis away as well: the sweeper requests them again from their waiting calls.
      await this.jobs.dispatch(orgIds).catch(() => undefined);
      throw err;
    }
  }

  /**
   * Hands calls to the carrier and schedules its reports. Replaying a dial (after a crash)
   * keeps the first dial time, so the carrier's timeline, and the job ids, are the same.
   * Calls that ended meanwhile give their slot back; calls to a listed number are ended first.
   * `carriers`: organizations' carriers already known (others are looked up). `spendLimited`: the
   * organization (a tenant with a monthly spend limit) whose calls these are, checked against it.
   */
  async dial(callIds: string[], carriers = new Map<string, CarrierAdapter>(), spendLimited: string | null = null): Promise<void> {
    if (callIds.length === 0) return;
    await this.endBarred(callIds);
    const calls = spendLimited ? await this.dialWithinSpendLimit(callIds, spendLimited) : await this.calls.markDialed(this.db, callIds);
    if (calls.length < callIds.length) {
      const open = new Set(calls.map((c) => c.id));
      const ended = await this.calls.orgsOf(callIds.filter((id) => !open.has(id)));
      for (const row of ended) await this.limits.release(row.org_id, [row.id]);
    }
    const scheduled: Array<{ callId: string } & ScheduledReport> = [];
    for (const call of calls) {
      if (!carriers.has(call.org_id)) carriers.set(call.org_id, await this.carriers.ofOrg(call.org_id));
      const reports = await carriers
        .get(call.org_id)!
        .dial({ callId: call.id, to: call.phone_number, from: call.our_number, dialedAt: call.dialed_at, simulate: call.simulate });
      scheduled.push(...reports.map((r) => ({ callId: call.id, ...r })));
    }
    await this.jobs.reports(scheduled);
  }

  /**
   * A call to a number on a do-not-call list is never dialed (CONTRACT.md §4): checked here, the
   * last moment before the carrier, so a number listed after the call was queued is not dialed
   * either. It ends `canceled` with `end_reason` `do_not_call`, uncharged, with its
   * `call.completed` like any ending; it never started, so its start in the hour is given back.
   */
  private async endBarred(callIds: string[]): Promise<void> {
    await this.endUndialed(await this.calls.barredAmong(callIds), 'do_not_call');
  }

  /**
   * A tenant's calls are not dialed once its monthly spend limit is reached (CONTRACT.md §5): in one
   * transaction, the calls locked, then the tenant's row (shared with other dials, after any charge
   * of the tenant commits: see `SpendLimits`), then the spend checked and the calls marked dialed
   * in one statement for the batch. Those refused end `canceled` / `spend_limit_reached` like a
   * listed number's, unless the tenant is disabled: then `apply-state` ends them `tenant_disabled`
   * (read from the row as share-locked, so no disable commits between the read and the dial).
   */
  private async dialWithinSpendLimit(callIds: string[], orgId: string): Promise<DialedCall[]> {
    const { dialed, refused } = await this.db.transaction(async (em) => {
      const open = await this.calls.lockForDial(em, callIds);
      const { disabled } = await this.spend.lockForDial(em, orgId);
      const dialed = await this.calls.markDialed(em, callIds, { orgId, month: this.spend.month() });
      const marked = new Set(dialed.map((c) => c.id));
      return { dialed, refused: disabled ? [] : open.filter((c) => !marked.has(c.id)) };
    });
    await this.endUndialed(refused, 'spend_limit_reached');
    return dialed;
  }

  /** Calls never dialed end `canceled` with `reason`, uncharged, `call.completed` written; their starts in the hour are given back. */
  private async endUndialed(calls: Array<{ id: string; org_id: string }>, reason: 'do_not_call' | 'spend_limit_reached'): Promise<void> {
    if (calls.length === 0) return;
    await this.end(
      calls.map((c) => c.id),
      { status: 'canceled', endReason: reason, at: new Date(), durationSeconds: 0 },
    );
    const byOrg = new Map<string, string[]>();
    for (const call of calls) byOrg.set(call.org_id, [...(byOrg.get(call.org_id) ?? []), call.id]);
    for (const [orgId, ids] of byOrg) await this.limits.returnStarts(orgId, ids);
  }

  /** Applies one carrier report to calls, writing the status change(s) and event(s) it implies. */
  async applyReport(callIds: string[], report: CarrierReport, at: Date): Promise<void> {
    if (report.kind === 'ringing') {
      await this.calls.markRinging(
        this.db,
        callIds.map((id) => ({ id, at })),
      );
    } else if (report.kind === 'answered') {
      await this.calls.catchUpRinging(this.db, callIds, at);
      await this.calls.markInProgress(
        this.db,
        callIds.map((id) => ({ id, at })),
      );
    } else {
      await this.end(callIds, { status: report.status, endReason: report.status, durationSeconds: report.durationSeconds, at });
    }
  }

  /**
   * Ends unfinished calls in one transaction: status, event, charge per started second (and
   * for a tenant's call its billable amount at the resale price), confirmation text (recorded and charged; sent by a job after commit), other domains'
   * hooks, ledger. Returns the calls it ended.
   */
  async end(callIds: string[], request: EndRequest): Promise<EndedCall[]> {
    const { ended, texts } = await this.db.transaction(async (em) => {
      const open = await this.calls.lockOpen(em, callIds);
      if (open.length === 0) return { ended: [], texts: [] };
      const ids = open.map((c) => c.id);
      if (request.status === 'completed' || request.status === 'no_answer') await this.calls.catchUpRinging(em, ids, request.at);
      if (request.status === 'completed') {
        await this.calls.markInProgress(
          em,
          open.filter((c) => c.status !== 'in_progress').map((c) => ({ id: c.id, at: request.at })),
        );
      }
      // Each call is charged to the payer recorded when it was placed.
      const orgs = await this.orgs.byIds(
        em,
        open.flatMap((c) => [c.org_id, c.payer_org_id]),
      );
      const payers = new Map(open.map((c) => [c.id, orgs.get(c.payer_org_id)!]));
      const ledger: LedgerLine[] = [];
      const charges = new Map<string, bigint>();
      const endings = open.map((call) => {
        const payer = payers.get(call.id)!;
        // Never ends before it was answered (an answer applied after the moment asked for).
        const at = call.started_at && call.started_at > request.at ? call.started_at : request.at;
        const talked = call.status === 'in_progress' && call.started_at ? Math.ceil((at.getTime() - call.started_at.getTime()) / 1000) : 0;
        const seconds = request.durationSeconds ?? talked;
        const charge = callCharge({ id: call.id, orgId: call.org_id }, payer, seconds);
        if (charge.line) ledger.push(charge.line);
        charges.set(call.id, charge.amount);
        // A tenant's call: what the tenant owes, at the resale price in force now, beside the charge.
        const billableMicros = callBillable(orgs.get(call.org_id)!, payer, seconds);
        return { id: call.id, status: request.status, endReason: request.endReason, durationSeconds: seconds, chargeMicros: charge.amount, billableMicros, at };
      });
      const result = await this.calls.markEnded(em, endings);
      // Tenants with a spend limit charged here: their rows locked, their month's spend read.
      const spending = await this.spend.charging(
        em,
        result.map((call) => ({
          org: orgs.get(call.orgId)!,
          payer: payers.get(call.id)!,
          micros: charges.get(call.id)!,
          mayText: call.outcome === 'positive',
        })),
      );
      const texts: string[] = [];
      for (const call of result) {
        const org = orgs.get(call.orgId)!;
        const text = await this.texts.record(em, call, org, payers.get(call.id)!, spending.reached(org.id));
        if (!text) continue;
        if (text.sent) texts.push(text.messageId);
        if (text.charge) {
          ledger.push(text.charge);
          spending.add(org.id, -text.charge.amountMicros);
        }
      }
      for (const hook of this.hooks) await hook.during(em, result);
      await this.spend.recordThresholds(em, spending);
      // Last, so each payer's balance row is locked only for the commit.
      await this.ledger.append(em, ...ledger);
      return { ended: result, texts };
    });
    if (ended.length) await this.afterEnd(ended, texts);
    return ended;
  }

  /**
   * After the ending committed: the texts' sends, slot release, admission of the next waiting
   * calls, and other domains' follow-ups. Lost (a crash, Redis away), the sweeper makes each up.
   */
  private async afterEnd(calls: EndedCall[], texts: string[]): Promise<void> {
    await this.jobs.sendTexts(texts);
    const byOrg = new Map<string, string[]>();
    for (const call of calls) byOrg.set(call.orgId, [...(byOrg.get(call.orgId) ?? []), call.id]);
    // The freed slots admit the calls waiting for them, if any: one dispatch for all.
    const waiting = await Promise.all([...byOrg].map(async ([orgId, ids]) => ((await this.limits.release(orgId, ids)) > 0 ? [orgId] : [])));
    await this.jobs.dispatch(waiting.flat());
    for (const hook of this.hooks) await hook.after(calls);
  }
}
