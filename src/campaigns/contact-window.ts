import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { timezones } from 'libphonenumber-geo-carrier';
import { isIanaZone } from '../http/schemas.js';
import { withinCallingWindow, type CallingWindow } from './calling-hours.js';

/** When a campaign may call a contact, in the contact's local time (CONTRACT.md §4 "Calling windows by destination"). */
export const DESTINATION_HOURS: CallingWindow = { start: '08:00', end: '21:00', weekdays: null };

/** How many numbers' time zones a process remembers (the most recently used). */
const REMEMBERED_NUMBERS = 100_000;

/**
 * The zones an E.164 number may be in (libphonenumber data by longest prefix): usually one, several for
 * a prefix spanning zones (US toll-free: 42), none when unknown. A look-up costs ~2 ms, so results are
 * remembered: a campaign looks its contacts up on every tick.
 */
export class PhoneTimezones {
  private readonly known = new Map<string, Promise<string[]>>();

  of(phoneNumber: string): Promise<string[]> {
    const remembered = this.known.get(phoneNumber);
    // Deleted and set again: a Map iterates in insertion order, so the first key is the least recently used.
    if (remembered) this.known.delete(phoneNumber);
    const zones =
      remembered ??
      lookUpZones(phoneNumber).catch((err: unknown) => {
        this.known.delete(phoneNumber);
        throw err;
      });
    this.known.set(phoneNumber, zones);
    if (this.known.size > REMEMBERED_NUMBERS) this.known.delete(this.known.keys().next().value!);
    return zones;
  }
}

async function lookUpZones(phoneNumber: string): Promise<string[]> {
  const zones = (await timezones(parsePhoneNumberFromString(phoneNumber))) ?? [];
  // A zone this runtime's time zone database does not know cannot be evaluated: as if unknown.
  return zones.filter(isIanaZone);
}

/**
 * Per tick: the campaign's hours in the organization's zone AND 08:00–21:00 at the contact (in every
 * candidate zone; unknown: the organization's). Campaign hours narrow the contact's window, never widen it.
 */
export class ContactWindow {
  /** Whether the campaign's own hours and weekdays allow calling now: when not, no contact may be called. */
  readonly campaignOpen: boolean;
  /** Keyed by candidate zones joined by spaces: few distinct sets per campaign. */
  private readonly destinationOpen = new Map<string, boolean>();

  constructor(
    private readonly timezones: PhoneTimezones,
    campaign: CallingWindow,
    private readonly orgTimezone: string,
    private readonly at: Date,
  ) {
    this.campaignOpen = withinCallingWindow(campaign, at, orgTimezone);
  }

  async allows(phoneNumber: string): Promise<boolean> {
    if (!this.campaignOpen) return false;
    const zones = await this.timezones.of(phoneNumber);
    const candidates = zones.length > 0 ? zones : [this.orgTimezone];
    const key = candidates.join(' ');
    let open = this.destinationOpen.get(key);
    if (open === undefined) {
      open = candidates.every((zone) => withinCallingWindow(DESTINATION_HOURS, this.at, zone));
      this.destinationOpen.set(key, open);
    }
    return open;
  }
}
