interface Caller<T> {
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

/**
 * A read shared by concurrent callers but never answered from before a caller asked: a caller
 * joins the next read to be sent, not one already in flight. At most one read is in flight; the
 * callers who asked meanwhile share the one sent as it settles.
 */
export class SharedRead<T> {
  private inFlight = false;
  private waiting: Caller<T>[] = [];

  constructor(private readonly read: () => Promise<T>) {}

  /** A value read after this call. */
  get(): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.inFlight) this.send();
    });
  }

  private send(): void {
    const callers = this.waiting;
    this.waiting = [];
    this.inFlight = true;
    const settle = (answer: (caller: Caller<T>) => void) => {
      this.inFlight = false;
      for (const caller of callers) answer(caller);
      if (this.waiting.length > 0) this.send();
    };
    // A read that throws at once rejects this promise too, rather than leave a read in flight for ever.
    const reading = new Promise<T>((resolve) => resolve(this.read()));
    reading.then(
      (value) => settle((caller) => caller.resolve(value)),
      (err: unknown) => settle((caller) => caller.reject(err)),
    );
  }
}
