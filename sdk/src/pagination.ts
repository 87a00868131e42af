/** One page of a list: `next_cursor` is null on the last one. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * What a list method returns. `await` it (or `.then`, `.catch`, `.finally`) for one page; `for await` over it for every item of
 * every page, fetched as the loop goes (`.pages()` for the pages themselves). Nothing is sent
 * before either; the first page is fetched once, whichever asks first.
 */
export class PagePromise<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  #first: Promise<Page<T>> | undefined;

  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
    private readonly firstCursor?: string,
  ) {}

  #firstPage(): Promise<Page<T>> {
    this.#first ??= this.fetchPage(this.firstCursor);
    return this.#first;
  }

  then<R1 = Page<T>, R2 = never>(
    onfulfilled?: ((page: Page<T>) => R1 | PromiseLike<R1>) | null,
    onrejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#firstPage().then(onfulfilled, onrejected);
  }

  catch<R = never>(onrejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<Page<T> | R> {
    return this.#firstPage().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<Page<T>> {
    return this.#firstPage().finally(onfinally);
  }

  /** Every page, from the first, following `next_cursor`. */
  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let page = await this.#firstPage();
    yield page;
    while (page.next_cursor !== null) {
      page = await this.fetchPage(page.next_cursor);
      yield page;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }
}
