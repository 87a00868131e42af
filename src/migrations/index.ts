import { VoiceOrganization1795367753388 } from './1795367753388-VoiceOrganization.js';
import { Foundation1795366114383 } from './1795366114383-Foundation.js';

/** Every migration, in order. Listed explicitly so the compiled build and tsx load the same set. */
export const migrations: Function[] = [Foundation1795366114383, VoiceOrganization1795367753388];
