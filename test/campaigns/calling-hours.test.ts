import { expect } from 'chai';
import { localClock, withinCallingWindow } from '../../src/campaigns/calling-hours.js';

describe('campaign calling hours', () => {
  // 2026-11-23 is a Monday.
  const at = (iso: string) => new Date(iso);

  it('reads the local weekday and time in the organization’s zone', () => {
    expect(localClock(at('2026-11-23T15:30:00Z'), 'UTC')).to.deep.equal({ weekday: 1, time: '15:30' });
    expect(localClock(at('2026-11-23T03:30:00Z'), 'America/New_York')).to.deep.equal({ weekday: 7, time: '22:30' });
    expect(localClock(at('2026-11-23T23:30:00Z'), 'Asia/Tokyo')).to.deep.equal({ weekday: 2, time: '08:30' });
  });

  it('allows any time without hours or weekdays', () => {
    expect(withinCallingWindow({ start: null, end: null, weekdays: null }, at('2026-11-23T03:00:00Z'), 'UTC')).to.equal(true);
  });

  it('holds a daytime window in local time, end excluded', () => {
    const window = { start: '09:00', end: '17:00', weekdays: null };
    expect(withinCallingWindow(window, at('2026-11-23T14:00:00Z'), 'America/New_York')).to.equal(true); // 09:00 local
    expect(withinCallingWindow(window, at('2026-11-23T13:59:00Z'), 'America/New_York')).to.equal(false);
    expect(withinCallingWindow(window, at('2026-11-23T22:00:00Z'), 'America/New_York')).to.equal(false); // 17:00 local
  });

  it('holds weekdays in local time', () => {
    const weekdaysOnly = { start: null, end: null, weekdays: [1, 2, 3, 4, 5] };
    expect(withinCallingWindow(weekdaysOnly, at('2026-11-23T12:00:00Z'), 'UTC')).to.equal(true);
    // Monday 03:00 UTC is still Sunday in New York.
    expect(withinCallingWindow(weekdaysOnly, at('2026-11-23T03:00:00Z'), 'America/New_York')).to.equal(false);
  });

  it('runs an overnight window across midnight, counting its morning to the day it began', () => {
    const fridayNights = { start: '22:00', end: '02:00', weekdays: [5] };
    expect(withinCallingWindow(fridayNights, at('2026-11-27T23:00:00Z'), 'UTC')).to.equal(true); // Fri 23:00
    expect(withinCallingWindow(fridayNights, at('2026-11-28T01:00:00Z'), 'UTC')).to.equal(true); // Sat 01:00
    expect(withinCallingWindow(fridayNights, at('2026-11-28T03:00:00Z'), 'UTC')).to.equal(false);
    expect(withinCallingWindow(fridayNights, at('2026-11-28T23:00:00Z'), 'UTC')).to.equal(false); // Sat 23:00
  });
});
