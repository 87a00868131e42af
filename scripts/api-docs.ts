// Writes the API reference from the app's route table: docs/openapi.json and
// docs/api-reference.md.  npm run docs:api
import { writeFileSync } from 'node:fs';
import { createApp } from '../src/app.js';
import { apiReferenceFiles } from '../src/http/api-reference.js';
import { createRedis } from '../src/lib/redis.js';

const redis = createRedis('command');
const ringlane = createApp({ redis });
for (const [file, text] of Object.entries(apiReferenceFiles(ringlane.routes))) {
  writeFileSync(file, text);
  console.log(`wrote ${file}`);
}
await ringlane.close();
redis.disconnect();
