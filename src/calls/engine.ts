import type { EntityManager } from 'typeorm';
import { chargeCall, payerOf } from '../billing/charges.js';
import { db } from '../lib/db.js';
import { logger } from '../lib/logger.js';
import { sendConfirmation } from '../messaging/texts.js';
import { Organization } from '../orgs/organization.entity.js';
import { appendCallEvent } from './call-events.js';
import { Call, TERMINAL_STATUSES, type EndReason, type TerminalStatus } from './call.entity.js';
import type { CallLimits } from './call-limits.js';
import type { CallJobs } from './calls.jobs.js';
import type { CarrierReport } from './carrier.js';
import { carrierFor } from './simulator.js';

const isTerminal = (status: string): status is TerminalStatus => (TERMINAL_STATUSES as readonly string[]).includes(status);

/** What a finished transaction leaves for after the commit. */
interface Ended {
  orgId: string;
  callId: string;
  campaignId: string | null;
}

/** Hooks other domains attach to a call's end (campaigns), run inside its transaction. */
export type CallEndHook = (em: EntityManager, call: Call) => Promise<void>;

/**
 * The call engine: admits queued calls within their organization's limits, hands them to
 * the carrier, and applies the carrier's reports as status changes. Every status change and
 * its event are one transaction; every step is idempotent, so a job that runs twice (a worker
 * killed mid-job) changes nothing the second time and nothing is charged twice.
 */
export class CallEngine {
  private readonly endHooks: CallEndHook[] = [];
  private readonly afterEndHooks: Array<(ended: Ended) => Promise<void>> = [];

  constructor(
    readonly limits: CallLimits,
    readonly jobs: CallJobs,
  ) {}

  onCallEnd(hook: CallEndHook, after?: (ended: Ended) => Promise<void>): void {
    this.endHooks.push(hook);
    if (after) this.afterEndHooks.push(after);
  }

  /** Outbound calls just committed as `queued`: queue them for admission. */
  async submitOutbound(orgId: string, calls: Array<{ id: string; createdAt: Date }>): Promise<void> {
    await this.limits.enqueue(orgId, calls);
    await this.jobs.dispatch(orgId);
  }

  /** Admits what the organization's limits allow, in creation order, and dials it. */
  async dispatch(orgId: string): Promise<void> {
    const org = await db.manager.findOneBy(Organization, { id: orgId });
    if (!org) return;
    for (;;) {
      const admission = await this.limits.admit(orgId, { maxConcurrentCalls: org.maxConcurrentCalls, maxCallsPerHour: org.maxCallsPerHour });
      for (const callId of admission.callIds) await this.dial(callId);
      if (admission.retryAt) await this.jobs.dispatch(orgId, admission.retryAt.getTime() - Date.now());
      if (admission.callIds.length < 100) return;
    }
  }

  /**
   * Hands a call to the carrier and schedules its reports. Replaying it (after a crash)
   * keeps the first dial time, so the carrier's timeline, and the job ids, are the same.
   */
  async dial(callId: string): Promise<void> {
    const call = await db.transaction(async (em) => {
      const found = await em.findOne(Call, { where: { id: callId }, lock: { mode: 'pessimistic_write' } });
      if (!found || isTerminal(found.status)) return found;
      if (!found.dialedAt) {
        found.dialedAt = new Date();
        await em.update(Call, { id: found.id }, { dialedAt: found.dialedAt });
      }
      return found;
    });
    if (!call) return;
    if (isTerminal(call.status)) {
      await this.limits.release(call.orgId, call.id);
      return;
    }
    const org = await db.manager.findOneByOrFail(Organization, { id: call.orgId });
    const reports = await carrierFor(org.carrierProvider).dial({
      callId: call.id,
      to: call.phoneNumber,
      from: call.ourNumber,
      dialedAt: call.dialedAt!,
      simulate: call.simulate,
    });
    await this.jobs.reports(call.id, reports);
  }

  /** Applies one carrier report, writing the status change(s) and event(s) it implies. */
  async applyReport(callId: string, report: CarrierReport, at: Date): Promise<void> {
    const ended = await db.transaction(async (em) => {
      const call = await em.findOne(Call, { where: { id: callId }, lock: { mode: 'pessimistic_write' } });
      if (!call || isTerminal(call.status)) return null; // already applied, or ended otherwise
      if (report.kind === 'ringing') {
        if (call.status === 'queued') await this.transition(em, call, 'ringing', at);
        return null;
      }
      if (report.kind === 'answered') {
        await this.answer(em, call, at);
        return null;
      }
      if (report.status === 'completed') await this.answer(em, call, call.startedAt ?? at);
      else if (report.status === 'no_answer' && call.status === 'queued') await this.transition(em, call, 'ringing', call.dialedAt ?? at);
      return this.end(em, call, { status: report.status, endReason: report.status, durationSeconds: report.durationSeconds, at });
    });
    if (ended) await this.afterEnd(ended);
  }

  /**
   * Ends a call that the carrier did not end (canceled, tenant disabled): charged for the
   * seconds it was in progress up to `at`, if any.
   */
  async endOnOurSide(em: EntityManager, call: Call, endReason: EndReason, at: Date): Promise<Ended | null> {
    if (isTerminal(call.status)) return null;
    const talked = call.status === 'in_progress' && call.startedAt ? Math.ceil((at.getTime() - call.startedAt.getTime()) / 1000) : 0;
    return this.end(em, call, { status: 'canceled', endReason, durationSeconds: Math.max(0, talked), at });
  }

  /** Slot release, admission of the next waiting call, and other domains' follow-ups. */
  async afterEnd(ended: Ended): Promise<void> {
    await this.limits.release(ended.orgId, ended.callId);
    await this.jobs.dispatch(ended.orgId);
    for (const hook of this.afterEndHooks) await hook(ended);
  }

  private async answer(em: EntityManager, call: Call, at: Date): Promise<void> {
    if (call.status === 'queued') await this.transition(em, call, 'ringing', call.dialedAt ?? at);
    if (call.status === 'ringing') {
      call.startedAt = at;
      await this.transition(em, call, 'in_progress', at);
    }
  }

  private async transition(em: EntityManager, call: Call, status: 'ringing' | 'in_progress', at: Date): Promise<void> {
    call.status = status;
    await appendCallEvent(em, call, status === 'ringing' ? 'call.ringing' : 'call.in_progress', at);
    await em.update(Call, { id: call.id }, { status: call.status, startedAt: call.startedAt, lastSequence: call.lastSequence });
  }

  private async end(
    em: EntityManager,
    call: Call,
    end: { status: TerminalStatus; endReason: EndReason; durationSeconds: number; at: Date },
  ): Promise<Ended> {
    const org = await em.findOneByOrFail(Organization, { id: call.orgId });
    const payer = await payerOf(em, org);
    call.status = end.status;
    call.endReason = end.endReason;
    call.endedAt = end.at;
    call.durationSeconds = end.durationSeconds;
    call.outcome = end.status === 'completed' ? call.simulate.outcome : end.status === 'canceled' ? null : 'unreachable';
    call.chargeMicros = await chargeCall(em, call, payer, end.durationSeconds);
    await appendCallEvent(em, call, 'call.completed', end.at);
    await em.update(Call, { id: call.id }, {
      status: call.status,
      endReason: call.endReason,
      endedAt: call.endedAt,
      durationSeconds: call.durationSeconds,
      outcome: call.outcome,
      chargeMicros: call.chargeMicros,
      lastSequence: call.lastSequence,
    });
    await sendConfirmation(em, call, org, payer);
    for (const hook of this.endHooks) await hook(em, call);
    logger.debug({ callId: call.id, status: call.status }, 'call ended');
    return { orgId: call.orgId, callId: call.id, campaignId: call.campaignId };
  }
}
