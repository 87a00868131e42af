import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { timezones } from 'libphonenumber-geo-carrier';
import { isIanaZone } from '../http/schemas.js';
import { withinCallingWindow, type CallingWindow } from './calling-hours.js';

/** When a campaign may call a contact, in the contact's local time (CONTRACT.md §4 "Calling windows by destination"). */
export const DESTINATION_HOURS: CallingWindow = { start: '08:00', end: '21:00', weekdays: null };

/** How many numbers' time zones a process remembers (the most recently used). */
const REMEMBERED_NUMBERS = 100_000;

/**
 * The time zones a phone number may be in, from Google's libphonenumber data through
 * libphonenumber-geo-carrier (by the number's longest known prefix): one for most numbers,
 * several for a prefix that spans zones (a US toll-free number has 42, from Guam to Adak), none
 * when the data knows nothing (an unassigned country code) or the number does not parse.
 *
 * The library reads and decodes its 100 KB data file on every look-up (about 2 ms), so each
 * number's zones are remembered: a campaign looks its contacts up again on every tick.
 */
export class PhoneTimezones {
  private readonly known = new Map<string, Promise<string[]>>();

  /** The candidate zones of an E.164 number; `[]` when none is known. */
  of(phoneNumber: string): Promise<string[]> {
    const remembered = this.known.get(phoneNumber);
    // Deleted and set again: a Map iterates in insertion order, so the first key is the least recently used.
    if (remembered) this.known.delete(phoneNumber);
    const zones = remembered ?? lookUpZones(phoneNumber).catch((err: unknown) => {
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
 * Whether a campaign may call a contact at one moment (CONTRACT.md §4), built once per campaign
 * tick: inside the campaign's own `calling_hours` and `weekdays` in the organization's zone, AND
 * between 08:00 and 21:00 in the contact's local time, taken from its number. A number with
 * several candidate zones needs that window to hold in every one of them (the most restrictive);
 * a number whose zone is unknown is taken to be in the organization's zone. So the campaign's
 * hours narrow the contact's window and can never widen it.
 */
export class ContactWindow {
  /** Whether the campaign's own hours and weekdays allow calling now: when not, no contact may be called. */
  readonly campaignOpen: boolean;
  /** Candidate zones (joined by spaces) → whether 08:00–21:00 holds in all of them now: few distinct sets per campaign. */
  private readonly destinationOpen = new Map<string, boolean>();

  constructor(
    private readonly timezones: PhoneTimezones,
    campaign: CallingWindow,
    private readonly orgTimezone: string,
    private readonly at: Date,
  ) {
    this.campaignOpen = withinCallingWindow(campaign, at, orgTimezone);
  }

  /** Whether the contact with this number may be called now. */
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
