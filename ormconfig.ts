// The DataSource the TypeORM CLI uses (migration:generate / migration:run / migration:revert):
//   node --import tsx node_modules/typeorm/cli.js migration:generate -d ormconfig.ts src/migrations/Name
import { openDatabase } from './src/runtime.js';

export default openDatabase();
