// npm run bench:tracing — what tracing costs: bench:load's open model at a steady rate (or its
// burst) with tracing off and on, each a whole `npm start` of its own, then per process the median
// CPU per delivered event and the ratio on/off, and what tracing adds in the processes it runs in
// (the service's: Postgres and Redis run none of it). By default each round runs the two side by
// side, their measured phases started together (BENCH_BARRIER): this machine's speed drifts by a
// third from one minute to the next, far more than tracing costs, and a pair shares it.
// BENCH_TRACING_PAIRED=0: one after the other, in alternating rounds, as before. See
// docs/operations.md#benchmarks.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { median } from './harness.js';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PAIRED = process.env.BENCH_TRACING_PAIRED !== '0';
/** The traced run of a pair: ports and a database of its own beside the untraced run's defaults. */
const TRACED_BESIDE = {
  BENCH_PORT: '3920',
  BENCH_RECEIVER_PORT: '3921',
  BENCH_BARE_PORT: '3922',
  BENCH_SINK_PORT: '3923',
  BENCH_DATABASE: 'ringlane_bench_load_traced',
};
const fmt = (n: number, digits: number) => n.toFixed(digits);

/** The service's own processes' CPU per event: every process but Postgres's backends and Redis. */
const serviceOf = (perEvent: Map<string, number>) =>
  [...perEvent].filter(([name]) => name !== 'all (sum)' && !name.startsWith('postgres') && name !== 'redis-server').reduce((sum, [, ms]) => sum + ms, 0);

/**
 * BENCH_TRACING_RATE (100 calls/s): each round one open-model step of bench:load at that rate,
 * POSTs on a clock as users send them, the same load offered to both runs: below what the two
 * together saturate the machine with, so that what tracing adds is its own cost, not batches made
 * smaller by a slower acceptance. `burst`: bench:load's burst instead (closed model, 32 POSTs in
 * flight), where the traced API, the burst's bottleneck, accepts calls more slowly and every
 * process that batches pays that too.
 */
const RATE = process.env.BENCH_TRACING_RATE || '100';
const WORKLOAD =
  RATE === 'burst'
    ? { name: "bench:load's burst", env: { BENCH_PHASES: 'burst' }, heading: '\nburst:' }
    : { name: `bench:load's open model at ${RATE} calls/s`, env: { BENCH_PHASES: 'rates', BENCH_RATES: RATE, BENCH_BREAKDOWN: '1' }, heading: '\nopen model:' };

/** The whole system's CPU per event; side by side, without Redis, one server that both runs used and each counted whole. */
const systemOf = (perEvent: Map<string, number>) => (perEvent.get('all (sum)') ?? NaN) - (PAIRED ? (perEvent.get('redis-server') ?? 0) : 0);

/** CPU ms per delivered event by process, and `all (sum)`, as one run of the workload printed them. */
async function measure(tracing: boolean, beside: Record<string, string> = {}, signal?: AbortSignal): Promise<Map<string, number>> {
  const env = { ...process.env, ...WORKLOAD.env, BENCH_TRACING: tracing ? '1' : '0', ...beside };
  const { stdout } = await run(process.execPath, ['dist/scripts/bench/load.js'], { env, maxBuffer: 16 * 1024 * 1024, signal });
  const perEvent = new Map<string, number>();
  const at = stdout.indexOf(WORKLOAD.heading);
  if (at === -1) throw new Error(`${WORKLOAD.name} printed no figures:\n${stdout}`);
  for (const line of stdout.slice(at).split('\n')) {
    const row = line.match(/^ {4}(\S.*?)\s{2,}[\d,]+\s+([\d.]+)(\s|$)/);
    if (row && !perEvent.has(row[1])) perEvent.set(row[1], Number(row[2]));
  }
  return perEvent;
}

/** One round's two runs side by side, meeting at a barrier before the measured phase. */
async function pair(): Promise<{ off: Map<string, number>; on: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tracing-'));
  const stop = new AbortController();
  try {
    const barrier = { BENCH_BARRIER: join(dir, 'barrier'), BENCH_BARRIER_PARTIES: '2' };
    const runs = [measure(false, barrier, stop.signal), measure(true, { ...TRACED_BESIDE, ...barrier }, stop.signal)];
    // A run that fails never reaches the barrier: the other is stopped (SIGTERM, it stops its
    // service) rather than left waiting there ten minutes.
    for (const r of runs) r.catch(() => stop.abort());
    const [off, on] = await Promise.all(runs);
    return { off, on };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rounds: Array<{ off: Map<string, number>; on: Map<string, number> }> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const { off, on } = PAIRED ? await pair() : { off: await measure(false), on: await measure(true) };
    rounds.push({ off, on });
    console.log(
      `round ${round}: CPU ms per delivered event, off ${fmt(systemOf(off), 3)}, on ${fmt(systemOf(on), 3)}; ` +
        `the service's processes off ${fmt(serviceOf(off), 3)}, on ${fmt(serviceOf(on), 3)}`,
    );
  }
  const processes = [...rounds[0].off.keys()].filter((p) => (rounds[0].off.get(p) ?? 0) >= 0.01 || p === 'all (sum)');
  console.log(
    `\nbench:tracing — ${WORKLOAD.name}, tracing off and on ${PAIRED ? 'side by side' : 'one after the other'}, ${ROUNDS} rounds; medians of CPU ms per delivered event`,
  );
  console.log(`  ${'process'.padEnd(30)} ${'off'.padStart(7)} ${'on'.padStart(7)} ${'on/off'.padStart(7)}`);
  for (const name of processes) {
    const off = median(rounds.map((r) => r.off.get(name) ?? 0));
    const on = median(rounds.map((r) => r.on.get(name) ?? 0));
    console.log(`  ${name.padEnd(30)} ${fmt(off, 3).padStart(7)} ${fmt(on, 3).padStart(7)} ${fmt(on / off, 2).padStart(7)}`);
  }
  const ratios = rounds.map((r) => systemOf(r.on) / systemOf(r.off));
  const whole = `whole system${PAIRED ? ' but the Redis both shared' : ''}`;
  console.log(`  each round's on/off, ${whole}: ${ratios.map((r) => fmt(r, 2)).join(', ')} (median ${fmt(median(ratios), 2)}; goal: at most 1.10)`);
  const added = median(rounds.map((r) => serviceOf(r.on) - serviceOf(r.off)));
  const base = median(rounds.map((r) => systemOf(r.off)));
  console.log(
    `  added in the service's processes, where tracing runs: median ${fmt(added, 3)} ms per event, ` +
      `${fmt((100 * added) / base, 1)}% of the ${whole}'s ${fmt(base, 3)} ms off (goal: at most 10%)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
