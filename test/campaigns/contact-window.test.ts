import { expect } from 'chai';
import type { CallingWindow } from '../../src/campaigns/calling-hours.js';
import { ContactWindow, PhoneTimezones } from '../../src/campaigns/contact-window.js';

// Calling windows by destination (CONTRACT.md §4), over real numbers and libphonenumber's data.
describe('a contact’s calling window, from its phone number', () => {
  const zones = new PhoneTimezones();
  const anyTime: CallingWindow = { start: null, end: null, weekdays: null };
  /** The window at `iso` (UTC) of a campaign with `hours` in an organization in `orgZone`. */
  const windowAt = (iso: string, hours = anyTime, orgZone = 'UTC') => new ContactWindow(zones, hours, orgZone, new Date(iso));

  const NEW_YORK = '+12125550143';
  const LOS_ANGELES = '+13105550178';
  const LONDON = '+442079460123';
  const TOLL_FREE = '+18005550199';
  const UNASSIGNED = '+9991234567';

  it('finds the time zones of real numbers: one for a city, several for a number spanning zones, none when unknown', async () => {
    expect(await zones.of(NEW_YORK)).to.deep.equal(['America/New_York']);
    expect(await zones.of('+12135550100')).to.deep.equal(['America/Los_Angeles']);
    expect(await zones.of(LOS_ANGELES)).to.deep.equal(['America/Los_Angeles']);
    expect(await zones.of(LONDON)).to.deep.equal(['Europe/London']);
    const tollFree = await zones.of(TOLL_FREE);
    expect(tollFree).to.include.members(['Pacific/Guam', 'America/New_York', 'America/Los_Angeles', 'Pacific/Honolulu', 'America/Adak']);
    expect(await zones.of('+19075550100')).to.deep.equal(['America/Adak', 'America/Anchorage']);
    expect(await zones.of(UNASSIGNED)).to.deep.equal([]);
    expect(await zones.of('+1')).to.deep.equal([]);
  });

  it('holds 08:00–21:00 in the contact’s local time, end excluded', async () => {
    // 2026-11-23 (a Monday) 15:30 UTC: 10:30 in New York, 07:30 in Los Angeles, 15:30 in London.
    const window = windowAt('2026-11-23T15:30:00Z');
    expect(await window.allows(NEW_YORK)).to.equal(true);
    expect(await window.allows(LOS_ANGELES)).to.equal(false);
    expect(await window.allows(LONDON)).to.equal(true);
    expect(await windowAt('2026-11-23T16:00:00Z').allows(LOS_ANGELES)).to.equal(true); // 08:00
    expect(await windowAt('2026-11-24T01:59:00Z').allows(NEW_YORK)).to.equal(true); // 20:59
    expect(await windowAt('2026-11-24T02:00:00Z').allows(NEW_YORK)).to.equal(false); // 21:00
    // Summer time moves it with the zone: 2026-07-01 12:30 UTC is 08:30 in New York (EDT).
    expect(await windowAt('2026-07-01T12:30:00Z').allows(NEW_YORK)).to.equal(true);
    expect(await windowAt('2026-11-23T12:30:00Z').allows(NEW_YORK)).to.equal(false); // 07:30 EST
  });

  it('a number with several candidate zones must be inside the window in every one of them', async () => {
    // 23:00 UTC: 18:00 in New York, 15:00 in Los Angeles, 13:00 in Honolulu, but 09:00 the next
    // day in Guam, 13:00 in Adak... and 19:30 in St. John's: every one inside 08:00–21:00.
    expect(await windowAt('2026-11-23T23:00:00Z').allows(TOLL_FREE)).to.equal(true);
    // 15:30 UTC: 10:30 in New York, but 01:30 in Guam and 05:30 in Honolulu.
    expect(await windowAt('2026-11-23T15:30:00Z').allows(TOLL_FREE)).to.equal(false);
    // 01:00 UTC: 11:00 in Guam, but 21:30 in St. John's (Newfoundland).
    expect(await windowAt('2026-11-24T01:00:00Z').allows(TOLL_FREE)).to.equal(false);
  });

  it('a number whose zone is unknown is taken to be in the organization’s zone', async () => {
    expect(await windowAt('2026-11-23T15:30:00Z', anyTime, 'UTC').allows(UNASSIGNED)).to.equal(true);
    expect(await windowAt('2026-11-23T15:30:00Z', anyTime, 'America/Los_Angeles').allows(UNASSIGNED)).to.equal(false); // 07:30
    expect(await windowAt('2026-11-23T15:30:00Z', anyTime, 'Asia/Tokyo').allows(UNASSIGNED)).to.equal(false); // 00:30
  });

  it('the campaign’s own hours and weekdays narrow the window and never widen it', async () => {
    const at = '2026-11-23T15:30:00Z';
    // Wider hours (06:00–22:00 in Los Angeles) do not let a Los Angeles contact be called at 07:30.
    const wide = windowAt(at, { start: '06:00', end: '22:00', weekdays: null }, 'America/Los_Angeles');
    expect(wide.campaignOpen).to.equal(true);
    expect(await wide.allows(LOS_ANGELES)).to.equal(false);
    expect(await wide.allows(NEW_YORK)).to.equal(true);
    // Narrower hours (16:00–18:00 UTC) keep London (15:30) out, though it is inside 08:00–21:00.
    const narrow = windowAt(at, { start: '16:00', end: '18:00', weekdays: null }, 'UTC');
    expect(narrow.campaignOpen).to.equal(false);
    expect(await narrow.allows(LONDON)).to.equal(false);
    // Weekdays too: Monday excluded, nobody is called.
    expect(await windowAt(at, { start: null, end: null, weekdays: [2, 3, 4, 5] }, 'UTC').allows(NEW_YORK)).to.equal(false);
  });
});
