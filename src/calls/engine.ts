import type { EntityManager } from 'typeorm';
import { callCharge, payerOf } from '../billing/charges.js';
import { appendLedger } from '../billing/ledger.js';
import { db } from '../lib/db.js';
import { sendConfirmation } from '../messaging/texts.js';
import { Organization } from '../orgs/organization.entity.js';
import { TERMINAL_STATUSES, type EndReason, type TerminalStatus } from './call.entity.js';
import type { CallLimits } from './call-limits.js';
import { lockCall, markDialed, markEnded, markInProgress, markRinging, type EndedCall } from './call-store.js';
import type { CallJobs } from './calls.jobs.js';
import type { CarrierReport } from './carrier.js';
import { carrierFor } from './simulator.js';

const isTerminal = (status: string): status is TerminalStatus => (TERMINAL_STATUSES as readonly string[]).includes(status);

/** Hooks other domains attach to a call's end: `during` runs in its transaction, `after` after commit. */
export interface CallEndHooks {
  during(em: EntityManager, call: EndedCall): Promise<void>;
  after(call: EndedCall): Promise<void>;
}

/** How a call ends: by the carrier, or on our side (canceled, tenant disabled). */
interface Ending {
  status: TerminalStatus;
  endReason: EndReason;
  at: Date;
  /** Seconds to bill; by default the carrier's, or the seconds in progress up to `at`. */
  durationSeconds?: number;
}

/**
 * The call engine: admits queued calls within their organization's limits, hands them to
 * the carrier, and applies the carrier's reports as status changes. Every status change and
 * its event are one statement or one transaction; every step is idempotent, so a job that runs
 * twice (a worker killed mid-job) changes nothing the second time and nothing is charged twice.
 */
export class CallEngine {
  private readonly hooks: CallEndHooks[] = [];

  constructor(
    readonly limits: CallLimits,
    readonly jobs: CallJobs,
  ) {}

  onCallEnd(hooks: CallEndHooks): void {
    this.hooks.push(hooks);
  }

  /** Outbound calls just committed as `queued`: queue them for admission. */
  async submitOutbound(orgId: string, calls: Array<{ id: string; createdAt: Date }>): Promise<void> {
    await this.limits.enqueue(orgId, calls);
    await this.jobs.dispatch(orgId);
  }

  /** Admits what the organization's limits allow, in creation order, and dials it. */
  async dispatch(orgId: string): Promise<void> {
    const [org] = await db.query('SELECT max_concurrent_calls, max_calls_per_hour FROM organizations WHERE id = $1', [orgId]);
    if (!org) return;
    const limits = { maxConcurrentCalls: org.max_concurrent_calls, maxCallsPerHour: org.max_calls_per_hour };
    for (;;) {
      const admission = await this.limits.admit(orgId, limits);
      await this.dial(admission.callIds);
      if (admission.retryAt) await this.jobs.dispatch(orgId, admission.retryAt.getTime() - Date.now());
      if (admission.callIds.length < 100) return;
    }
  }

  /**
   * Hands calls to the carrier and schedules its reports. Replaying a dial (after a crash)
   * keeps the first dial time, so the carrier's timeline, and the job ids, are the same.
   * Calls that ended meanwhile give their slot back.
   */
  async dial(callIds: string[]): Promise<void> {
    if (callIds.length === 0) return;
    const calls = await markDialed(db.manager, callIds);
    if (calls.length < callIds.length) {
      const open = new Set(calls.map((c) => c.id));
      const ended = await db.query('SELECT id, org_id FROM calls WHERE id = ANY($1)', [callIds.filter((id) => !open.has(id))]);
      for (const row of ended) await this.limits.release(row.org_id, row.id);
    }
    const providers = new Map<string, string>();
    for (const call of calls) {
      if (!providers.has(call.orgId)) {
        const [org] = await db.query('SELECT carrier_provider FROM organizations WHERE id = $1', [call.orgId]);
        providers.set(call.orgId, org.carrier_provider);
      }
      const carrier = carrierFor(providers.get(call.orgId)!);
      const reports = await carrier.dial({ callId: call.id, to: call.phoneNumber, from: call.ourNumber, dialedAt: call.dialedAt, simulate: call.simulate });
      await this.jobs.reports(call.id, reports);
    }
  }

  /** Applies one carrier report, writing the status change(s) and event(s) it implies. */
  async applyReport(callId: string, report: CarrierReport, at: Date): Promise<void> {
    if (report.kind === 'ringing') {
      await markRinging(db.manager, callId, at);
    } else if (report.kind === 'answered') {
      if (!(await markInProgress(db.manager, callId, at))) await this.catchUp(db.manager, callId, 'in_progress', at);
    } else {
      await this.end(callId, { status: report.status, endReason: report.status, durationSeconds: report.durationSeconds, at });
    }
  }

  /**
   * Ends a call whatever its state (a canceled call, a disabled tenant's): charged for the
   * seconds it was in progress up to `at`, if any. Returns false when it had already ended.
   */
  async endOnOurSide(callId: string, endReason: EndReason, at: Date): Promise<boolean> {
    return this.end(callId, { status: 'canceled', endReason, at });
  }

  private async end(callId: string, ending: Ending): Promise<boolean> {
    const ended = await db.transaction(async (em) => {
      const call = await lockCall(em, callId);
      if (!call || isTerminal(call.status)) return null; // already ended: nothing to do, nothing to charge
      if (ending.status === 'completed') await this.catchUp(em, callId, 'in_progress', call.startedAt ?? ending.at);
      if (ending.status === 'no_answer') await this.catchUp(em, callId, 'ringing', call.dialedAt ?? ending.at);
      const talked = call.startedAt && call.status === 'in_progress' ? Math.ceil((ending.at.getTime() - call.startedAt.getTime()) / 1000) : 0;
      const seconds = ending.durationSeconds ?? Math.max(0, talked);

      const org = await em.findOneByOrFail(Organization, { id: call.orgId });
      const payer = await payerOf(em, org);
      const charge = callCharge({ id: callId, orgId: org.id }, payer, seconds);
      const result = await markEnded(em, callId, { status: ending.status, endReason: ending.endReason, durationSeconds: seconds, chargeMicros: charge.amount, at: ending.at });
      if (!result) return null;
      const text = await sendConfirmation(em, result, org, payer);
      for (const hook of this.hooks) await hook.during(em, result);
      // Last, so the payer's balance row is locked only for the commit.
      await appendLedger(em, ...[charge.line, text].filter((line) => line !== null));
      return result;
    });
    if (!ended) return false;
    await this.afterEnd(ended);
    return true;
  }

  /** Slot release, admission of the next waiting call, and other domains' follow-ups. */
  async afterEnd(call: EndedCall): Promise<void> {
    await this.limits.release(call.orgId, call.id);
    await this.jobs.dispatch(call.orgId);
    for (const hook of this.hooks) await hook.after(call);
  }

  /** Writes the steps a call skipped (a report lost or applied out of order), each with its event. */
  private async catchUp(em: EntityManager, callId: string, to: 'ringing' | 'in_progress', at: Date): Promise<void> {
    const [row] = await em.query('SELECT dialed_at FROM calls WHERE id = $1', [callId]);
    await markRinging(em, callId, row?.dialed_at ?? at);
    if (to === 'in_progress') await markInProgress(em, callId, at);
  }
}
