// HTML for notification mail: escaped text, and a page shell with inline styles (mail clients drop
// <style> blocks and external sheets, docs/notifications.md "Mail").

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ENTITIES[c]!)

/** A whole mail body: a 600-pixel column, the service's name, the content and a footer. */
export function mailPage(title: string, body: string, footer: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>
<body style="margin:0;padding:0;background:#f4f5f7;font-family:Arial,Helvetica,sans-serif;color:#1f2328">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7"><tr><td align="center" style="padding:24px 8px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="max-width:600px;background:#ffffff;border:1px solid #d8dee4">
<tr><td style="padding:16px 24px;border-bottom:1px solid #d8dee4;font-weight:bold">dmarcwatch</td></tr>
<tr><td style="padding:16px 24px;font-size:14px;line-height:1.5">${body}</td></tr>
<tr><td style="padding:12px 24px;border-top:1px solid #d8dee4;font-size:12px;color:#656d76">${footer}</td></tr>
</table></td></tr></table></body></html>`
}

/** The footer every notification carries: why it came, and where to stop it. */
export function mailFooter(settingsUrl: string): string {
  return `You receive this because your dmarcwatch account sends notifications to this address. <a href="${escapeHtml(settingsUrl)}">Notification settings</a> · the unsubscribe link of your mail program stops this kind of mail.`
}
