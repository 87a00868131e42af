import { Router } from 'express';
import type { ApiRouter } from '../http/endpoint.js';
import type { RouteDoc } from '../http/route-doc.js';
import { idParams } from '../http/schemas.js';
import { validate } from '../http/validate.js';
import { renderBookingPage } from './booking-page.html.js';
import { type BookingPageChanges, bookingPageSchema, bookingPageSettingsSchema } from './booking-page.schemas.js';
import type { BookingPageService } from './booking-page.service.js';

/** `/v1/booking-page` settings; changing them is closed inside a tenant, which never has a page. */
export function bookingPageRoutes(api: ApiRouter, bookingPage: BookingPageService): void {
  api
    .get('/booking-page', {
      summary: 'Read the booking page settings',
      response: bookingPageSettingsSchema,
      handler: ({ actor }) => bookingPage.read(actor),
    })
    .put<BookingPageChanges>('/booking-page', {
      summary: 'Change the booking page settings',
      capability: 'settings',
      tenant: 'forbidden',
      body: bookingPageSchema,
      response: bookingPageSettingsSchema,
      handler: ({ actor, body }) => bookingPage.update(actor, body),
    });
}

/** An organization id; anything that cannot be one has no page. */
const pageParams = idParams('booking_page', 'org_id');

/** `GET /book/{org_id}`: the public booking page, HTML, without authentication; `router` is mounted at `path`. */
export function publicBookingPageRoutes(bookingPage: BookingPageService): { path: string; router: Router; routes: RouteDoc[] } {
  const router = Router();
  router.get('/:org_id', async (req, res) => {
    const orgId = validate<{ org_id: string }>(pageParams, req.params, 'params').org_id;
    const html = renderBookingPage(await bookingPage.publicPage(orgId));
    res
      .status(200)
      .set({
        'Content-Type': 'text/html; charset=utf-8',
        // Escaping is the defence; the policy is a second one: the page runs no script at all.
        'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
        'X-Content-Type-Options': 'nosniff',
      })
      .send(html);
  });
  return {
    path: '/book',
    router,
    routes: [
      { method: 'get', path: '/book/:org_id', summary: "An organization's public booking page (HTML)", params: pageParams, status: 200, caller: 'anyone' },
    ],
  };
}
