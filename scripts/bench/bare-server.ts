// The baseline of bench:auth: a bare Express route answering a fixed JSON body from memory.
import express from 'express';

const body: unknown = JSON.parse(process.env.BARE_BODY ?? '{}');
const app = express();
app.use(express.json({ limit: '1mb' }));
app.get('/v1/api-keys', (_req, res) => {
  res.json(body);
});
const server = app.listen(Number(process.env.PORT), () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
