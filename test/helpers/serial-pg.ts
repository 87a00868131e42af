import pg from 'pg';

/**
 * A pg client that runs the queries given to it one after another, each once the one before has
 * settled: the "external async flow control" pg asks for. TypeORM's schema reader (loadTables,
 * behind the schema builder) sends one client several queries at once, per table and column,
 * which pg 8.19 deprecates ("Calling client.query() when the client is already executing a
 * query") and pg 9 refuses. Only the promise form is used by TypeORM, so only it is ordered.
 */
export class SerialClient extends pg.Client {
  private tail: Promise<unknown> = Promise.resolve();

  override query(...args: any[]): any {
    if (typeof args.at(-1) === 'function' || typeof args[0]?.submit === 'function') return (super.query as (...a: any[]) => any)(...args);
    const run = this.tail.then(() => (super.query as (...a: any[]) => Promise<unknown>)(...args));
    this.tail = run.catch(() => undefined);
    return run;
  }
}
