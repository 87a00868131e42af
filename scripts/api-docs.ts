// Writes the API reference from the app's route table: docs/openapi.json and
// docs/api-reference.md.  npm run docs:api
import { writeFileSync } from 'node:fs';
import { createApp } from '../src/app.js';
import { apiReferenceFiles } from '../src/http/api-reference.js';
import { createRedis } from '../src/lib/redis.js';
import { createRuntime, openDatabase } from '../src/runtime.js';

const redis = createRedis('command');
const runtime = createRuntime({ db: openDatabase(), redis });
const ringlane = createApp({ runtime });
for (const [file, text] of Object.entries(apiReferenceFiles(ringlane.routes))) {
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
await ringlane.close();
await runtime.close();
redis.disconnect();
