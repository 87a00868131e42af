// The DataSource the TypeORM CLI uses (migration:generate / migration:run / migration:revert):
//   node --import tsx node_modules/typeorm/cli.js migration:generate -d ormconfig.ts src/migrations/Name
import { db } from './src/lib/db.js';

export default db;
