import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);

/**
 * The OpenTelemetry packages a process has loaded once the preload ran and the application's
 * modules (the runtime, the worker runner) are imported, as the Procfile starts it.
 */
async function loadedTelemetry(env: Record<string, string>): Promise<string[]> {
  const script = `
    import { createRequire } from 'node:module';
    await import('./src/runtime.ts');
    await import('./workers/run-worker.ts');
    const names = Object.keys(createRequire(import.meta.url).cache).flatMap((p) => /node_modules\\/((@opentelemetry\\/)?[^/]+)\\//.exec(p)?.[1] ?? []);
    console.log(JSON.stringify([...new Set(names)].filter((n) => /opentelemetry|otel/.test(n)).sort()));`;
  const { OTEL_EXPORTER_OTLP_ENDPOINT: _a, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _b, ...inherited } = process.env;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--import', './src/lib/telemetry-preload.ts', '--input-type=module', '-e', script], {
    env: { ...inherited, ...env },
  });
  return JSON.parse(stdout) as string[];
}

describe('tracing off by default (issue 22)', function () {
  this.timeout(30_000);

  it('without an OTLP endpoint no OpenTelemetry SDK, instrumentation, exporter or bullmq-otel is loaded (only the API prom-client has always loaded)', async () => {
    expect(await loadedTelemetry({})).to.deep.equal(['@opentelemetry/api']);
  });

  it('with one, the SDK, the exporter, the instrumentations and bullmq-otel are', async () => {
    const loaded = await loadedTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(loaded).to.include.members([
      '@opentelemetry/sdk-trace-node',
      '@opentelemetry/exporter-trace-otlp-http',
      '@opentelemetry/instrumentation-pg',
      '@opentelemetry/instrumentation-ioredis',
      'bullmq-otel',
    ]);
  });

  it('OTEL_SDK_DISABLED=true keeps it off whatever the endpoint says', async () => {
    expect(await loadedTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' })).to.deep.equal(['@opentelemetry/api']);
  });
});
