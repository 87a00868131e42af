import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { CsvFile } from '../lib/csv.js';

/** What `pipeline` rejects with when the client hung up before the end. */
const clientLeft = (err: unknown) => (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE';

/**
 * Streams a CSV attachment: the next chunk is asked for only once the client took the previous
 * (backpressure), so an answer of any size holds about one chunk in memory. The client hanging up
 * ends the iteration (the producer runs no further query). A failure after the headers went out
 * destroys the connection (`pipeline` does): the client sees a cut-off answer, never one that looks
 * complete; the error handler logs it.
 */
export async function sendCsv(res: Response, file: CsvFile): Promise<void> {
  res.status(200).set({ 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="${file.filename}"` });
  try {
    // A high-water mark of one byte: no chunk is produced ahead of the one the socket is writing.
    await pipeline(Readable.from(file.chunks, { objectMode: false, highWaterMark: 1 }), res);
  } catch (err) {
    if (!clientLeft(err)) throw err;
  }
}
