import type { PublicBookingPage } from './booking-page.service.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe to place in HTML content and in quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

const list = (items: string[], empty: string) => (items.length ? `<ul>\n${items.join('\n')}\n</ul>` : `<p>${empty}</p>`);

/** The public booking page. Every string from the organization is escaped. */
export function renderBookingPage(page: PublicBookingPage): string {
  const services = page.services.map(
    (s) => `<li><strong>${escapeHtml(s.name)}</strong> (${s.duration_minutes} minutes)` + (s.description ? `<br>${escapeHtml(s.description)}` : '') + '</li>',
  );
  const locations = page.locations.map((l) => `<li><strong>${escapeHtml(l.name)}</strong>` + (l.address ? `<br>${escapeHtml(l.address)}` : '') + '</li>');
  const title = escapeHtml(page.headline);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
</head>
<body>
<main>
<h1>${title}</h1>
<section>
<h2>Services</h2>
${list(services, 'No services are listed yet.')}
</section>
<section>
<h2>Locations</h2>
${list(locations, 'No locations are listed yet.')}
</section>
</main>
</body>
</html>
`;
}
