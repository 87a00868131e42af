import { expect } from 'chai';
import { SharedRead } from '../../src/lib/shared-read.js';

/** A read whose answers the test gives, one per read sent, in order. */
function controlledRead() {
  const pending: { resolve: (v: number) => void; reject: (err: Error) => void }[] = [];
  let value = 0;
  const read = () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject }));
  return {
    shared: new SharedRead(read),
    sent: () => pending.length,
    /** Answers the oldest read sent with the value as it is now. */
    answer: () => pending.shift()!.resolve(value),
    fail: () => pending.shift()!.reject(new Error('unreadable')),
    set: (v: number) => (value = v),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('SharedRead', () => {
  it('the first caller sends a read at once; callers asking while it is in flight share the next one, sent after they asked', async () => {
    const c = controlledRead();
    const first = c.shared.get();
    expect(c.sent()).to.equal(1);
    c.set(1); // a change the read in flight may not see
    const [second, third] = [c.shared.get(), c.shared.get()];
    expect(c.sent(), 'no second read while one is in flight').to.equal(1);
    c.answer();
    expect(await first).to.equal(1);
    await tick();
    expect(c.sent(), 'one read for both who waited').to.equal(1);
    c.set(2);
    c.answer();
    expect(await Promise.all([second, third])).to.deep.equal([2, 2]);
    await tick();
    expect(c.sent()).to.equal(0);
  });

  it('a failed read fails those who shared it, not those who wait for the next', async () => {
    const c = controlledRead();
    const first = c.shared.get();
    const [second, third] = [c.shared.get(), c.shared.get()];
    c.answer();
    await first;
    await tick();
    const fourth = c.shared.get();
    c.fail();
    const failed = await Promise.allSettled([second, third]);
    expect(failed.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    await tick();
    c.set(3);
    c.answer();
    expect(await fourth).to.equal(3);
  });

  it('a read that throws at once fails its callers and does not stop later reads', async () => {
    let calls = 0;
    const shared = new SharedRead<number>(() => {
      calls++;
      if (calls === 1) throw new Error('not connected');
      return Promise.resolve(calls);
    });
    let failed: unknown;
    await shared.get().catch((err: unknown) => (failed = err));
    expect((failed as Error).message).to.equal('not connected');
    expect(await shared.get()).to.equal(2);
  });
});
