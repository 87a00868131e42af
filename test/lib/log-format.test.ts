import { Writable } from 'node:stream';
import { expect } from 'chai';
import { defaultLogFormat, prettyLine } from '../../src/lib/log-format.js';
import { createLogger } from '../../src/lib/logger.js';
import { withoutColours } from '../helpers/terminal.js';

/** What a logger writes at `info`, one JSON line per call. */
function loggedLines(write: (log: ReturnType<typeof createLogger>) => void): string[] {
  const lines: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  write(createLogger('info', out));
  return lines;
}

describe('readable log lines (LOG_FORMAT=pretty)', () => {
  it('a terminal outside production gets readable lines; production, pipes and files get JSON', () => {
    expect(defaultLogFormat('development', true)).to.equal('pretty');
    expect(defaultLogFormat('test', true)).to.equal('pretty');
    expect(defaultLogFormat('production', true)).to.equal('json');
    expect(defaultLogFormat('development', false)).to.equal('json');
    expect(defaultLogFormat('development', undefined)).to.equal('json');
  });

  it('one line per event: time, coloured level, message, then the fields; an error as its type, message and where it was thrown; secrets still redacted', () => {
    const [info, failure] = loggedLines((log) => {
      log.info({ worker: 'relay', delivery: { attempt: 2, status: 'retrying' }, api_key: 'rl_live_not_to_be_seen' }, 'worker started');
      log.error({ err: new TypeError('the receiver went away') }, 'webhooks: attempt not recorded');
    });
    const pretty = prettyLine(info);
    expect(pretty).to.include('\x1b[32mINFO ');
    expect(pretty.endsWith('\n')).to.equal(true);
    expect(pretty.slice(0, -1)).to.not.include('\n');
    expect(withoutColours(pretty)).to.match(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}worker started worker=relay delivery=\{"attempt":2,"status":"retrying"\} api_key="\[redacted\]"\n$/,
    );
    const error = withoutColours(prettyLine(failure));
    expect(error).to.match(
      /^\d\d:\d\d:\d\d\.\d{3} ERROR webhooks: attempt not recorded err="TypeError: the receiver went away \(at .+log-format\.test\.ts:\d+:\d+\)?\)"\n$/,
    );
    expect(error.slice(0, -1)).to.not.include('\n');
  });

  it('passes through what is not a pino line (a stack printed by Node itself) unchanged', () => {
    expect(prettyLine('    at main (file.js:1:1)\n')).to.equal('    at main (file.js:1:1)\n');
    expect(prettyLine('"a JSON string"\n')).to.equal('"a JSON string"\n');
  });
});
