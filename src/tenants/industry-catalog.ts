/** The industries a tenant may be in (CONTRACT.md "Tenant"), each with its starter services. */
export const STARTER_SERVICES = {
  dental: [
    { name: 'Check-up and cleaning', durationMinutes: 45 },
    { name: 'Filling', durationMinutes: 60 },
    { name: 'Teeth whitening', durationMinutes: 60 },
  ],
  medical: [
    { name: 'General consultation', durationMinutes: 20 },
    { name: 'Annual physical', durationMinutes: 40 },
    { name: 'Vaccination', durationMinutes: 15 },
  ],
  salon: [
    { name: 'Haircut', durationMinutes: 45 },
    { name: 'Colour', durationMinutes: 120 },
    { name: 'Blow-dry', durationMinutes: 30 },
  ],
  fitness: [
    { name: 'Personal training session', durationMinutes: 60 },
    { name: 'Fitness assessment', durationMinutes: 45 },
    { name: 'Group class', durationMinutes: 50 },
  ],
  legal: [
    { name: 'Initial consultation', durationMinutes: 30 },
    { name: 'Document review', durationMinutes: 60 },
  ],
  real_estate: [
    { name: 'Property viewing', durationMinutes: 30 },
    { name: 'Valuation', durationMinutes: 60 },
  ],
  home_services: [
    { name: 'On-site estimate', durationMinutes: 60 },
    { name: 'Repair visit', durationMinutes: 90 },
  ],
  automotive: [
    { name: 'Oil change', durationMinutes: 30 },
    { name: 'Tyre change', durationMinutes: 45 },
    { name: 'Inspection', durationMinutes: 60 },
  ],
  restaurant: [
    { name: 'Table reservation', durationMinutes: 90 },
    { name: 'Private event enquiry', durationMinutes: 30 },
  ],
  other: [{ name: 'Appointment', durationMinutes: 30 }],
} as const satisfies Record<string, ReadonlyArray<{ name: string; durationMinutes: number }>>;

export type Industry = keyof typeof STARTER_SERVICES;

export const INDUSTRIES = Object.keys(STARTER_SERVICES) as Industry[];
