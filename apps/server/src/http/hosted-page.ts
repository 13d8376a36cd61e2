import type { Response } from "express";

// The HTML pages the sandbox hosts outside the API (card details, KYC). They
// take no credentials (a single-use token in the path is the authorisation),
// so nothing may be cached or leaked through the Referer header, and they load
// nothing from elsewhere. They may be framed (a card details page is meant for
// an iframe).

/** Text for HTML: every character with a meaning in markup escaped. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );
}

/** Answers a whole page: `body` is trusted markup, `css` the page's own rules. */
export function hostedPage(
  res: Response,
  status: number,
  title: string,
  body: string,
  css: string,
): void {
  res.status(status).set({
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
  }).send(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; padding: 16px; color: #1a1a1a; }
  .error { max-width: 340px; border: 1px solid #c33; border-radius: 8px; padding: 16px; }
${css}
</style>
</head>
<body>
${body}
</body>
</html>
`);
}
