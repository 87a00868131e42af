import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { DataSource } from 'typeorm';
import type { PostgresDataSourceOptions } from 'typeorm/driver/postgres/PostgresDataSourceOptions.js';
import { config } from '../../src/config.js';
import { db } from './db.js';

/** A statement as Postgres received it (parameters as $n), and the owners it ran inside, outermost first. */
export interface SentStatement {
  text: string;
  owners: string[];
}

/** A class, whose methods may be made owners. */
export type Class = { name: string; prototype: object };

/**
 * Connections that keep the text of every statement sent through them while an owner runs: a
 * method made an owner (`own`) tags what runs inside it, however deep, with `Class.method`.
 */
export class StatementLog {
  readonly sent: SentStatement[] = [];
  private readonly scope = new AsyncLocalStorage<string[]>();
  private readonly restores: Array<() => void> = [];
  private readonly client: typeof pg.Client;

  constructor() {
    const { sent, scope } = this;
    this.client = class StatementLoggingClient extends pg.Client {
      override query(...args: any[]): any {
        const owners = scope.getStore();
        const text: unknown = typeof args[0] === 'string' ? args[0] : args[0]?.text;
        if (owners && typeof text === 'string') sent.push({ text, owners });
        return (super.query as (...a: any[]) => any)(...args);
      }
    };
  }

  /** A pg pool (one connection) whose statements are kept. */
  pool(): pg.Pool {
    return new pg.Pool({ connectionString: config.databaseUrl, max: 1, Client: this.client });
  }

  /** A DataSource like the app's (one connection) whose statements are kept. */
  dataSource(): Promise<DataSource> {
    const options = db.options as PostgresDataSourceOptions;
    return new DataSource({ ...options, extra: { ...options.extra, max: 1, Client: this.client } }).initialize();
  }

  /** Makes `klass.prototype[method]` an owner, until `restore()`; returns its name. */
  own(klass: Class, method: string): string {
    const prototype = klass.prototype as Record<string, unknown>;
    const original = prototype[method];
    if (typeof original !== 'function') throw new Error(`${klass.name} has no method ${method}`);
    const name = `${klass.name}.${method}`;
    const scope = this.scope;
    prototype[method] = function (this: unknown, ...args: unknown[]) {
      return scope.run([...(scope.getStore() ?? []), name], () => original.apply(this, args));
    };
    this.restores.push(() => {
      prototype[method] = original;
    });
    return name;
  }

  restore(): void {
    for (const restore of this.restores.splice(0).reverse()) restore();
  }
}
