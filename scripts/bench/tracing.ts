// npm run bench:tracing — what tracing costs: bench:load's burst with tracing off and on, in
// alternating rounds (each a whole `npm start` of its own), then per process the median CPU per
// delivered event and the ratio on/off, and what tracing adds in the processes it runs in (the
// service's: Postgres and Redis run none of it, and their run-to-run spread is larger than
// tracing's cost). See docs/operations.md#benchmarks.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { median } from './harness.js';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const fmt = (n: number, digits: number) => n.toFixed(digits);

/** The service's own processes' CPU per event: every process but Postgres's backends and Redis. */
const serviceOf = (perEvent: Map<string, number>) =>
  [...perEvent].filter(([name]) => name !== 'all (sum)' && !name.startsWith('postgres') && name !== 'redis-server').reduce((sum, [, ms]) => sum + ms, 0);

/**
 * BENCH_TRACING_RATE=<calls/s>: each round one open-model step of bench:load at that rate (below
 * what saturates the machine, so that tracing's cost does not change how work is batched) instead
 * of the burst.
 */
const RATE = process.env.BENCH_TRACING_RATE;
const WORKLOAD = RATE
  ? { name: `bench:load's open model at ${RATE} calls/s`, env: { BENCH_PHASES: 'rates', BENCH_RATES: RATE, BENCH_BREAKDOWN: '1' }, heading: '\nopen model:' }
  : { name: "bench:load's burst", env: { BENCH_PHASES: 'burst' }, heading: '\nburst:' };

/** CPU ms per delivered event by process, and `all (sum)`, as one run of the workload printed them. */
async function burst(tracing: boolean): Promise<Map<string, number>> {
  const env = { ...process.env, ...WORKLOAD.env, BENCH_TRACING: tracing ? '1' : '0' };
  const { stdout } = await run(process.execPath, ['dist/scripts/bench/load.js'], { env, maxBuffer: 16 * 1024 * 1024 });
  const perEvent = new Map<string, number>();
  const burstAt = stdout.indexOf(WORKLOAD.heading);
  if (burstAt === -1) throw new Error(`${WORKLOAD.name} printed no figures:\n${stdout}`);
  for (const line of stdout.slice(burstAt).split('\n')) {
    const row = line.match(/^ {4}(\S.*?)\s{2,}[\d,]+\s+([\d.]+)(\s|$)/);
    if (row && !perEvent.has(row[1])) perEvent.set(row[1], Number(row[2]));
  }
  return perEvent;
}

async function main(): Promise<void> {
  const rounds: Array<{ off: Map<string, number>; on: Map<string, number> }> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const off = await burst(false);
    const on = await burst(true);
    rounds.push({ off, on });
    console.log(
      `round ${round}: CPU ms per delivered event, off ${fmt(off.get('all (sum)') ?? NaN, 3)}, on ${fmt(on.get('all (sum)') ?? NaN, 3)}; ` +
        `the service's processes off ${fmt(serviceOf(off), 3)}, on ${fmt(serviceOf(on), 3)}`,
    );
  }
  const processes = [...rounds[0].off.keys()].filter((p) => (rounds[0].off.get(p) ?? 0) >= 0.01 || p === 'all (sum)');
  console.log(`\nbench:tracing — ${WORKLOAD.name}, tracing off then on, ${ROUNDS} rounds; medians of CPU ms per delivered event`);
  console.log(`  ${'process'.padEnd(30)} ${'off'.padStart(7)} ${'on'.padStart(7)} ${'on/off'.padStart(7)}`);
  for (const name of processes) {
    const off = median(rounds.map((r) => r.off.get(name) ?? 0));
    const on = median(rounds.map((r) => r.on.get(name) ?? 0));
    console.log(`  ${name.padEnd(30)} ${fmt(off, 3).padStart(7)} ${fmt(on, 3).padStart(7)} ${fmt(on / off, 2).padStart(7)}`);
  }
  const ratios = rounds.map((r) => (r.on.get('all (sum)') ?? NaN) / (r.off.get('all (sum)') ?? NaN));
  console.log(`  each round's on/off, whole system: ${ratios.map((r) => fmt(r, 2)).join(', ')} (median ${fmt(median(ratios), 2)}; goal: at most 1.10)`);
  const added = median(rounds.map((r) => serviceOf(r.on) - serviceOf(r.off)));
  const base = median(rounds.map((r) => r.off.get('all (sum)') ?? NaN));
  console.log(
    `  added in the service's processes, where tracing runs: median ${fmt(added, 3)} ms per event, ` +
      `${fmt((100 * added) / base, 1)}% of the whole system's ${fmt(base, 3)} ms off (goal: at most 10%)`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
