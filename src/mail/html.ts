const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** For user-supplied text (a username) placed in a mail's HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character]);
}

/** The plain text of our own mail templates: tags stripped, entities and line breaks kept. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(br|\/p|\/h\d|\/div|\/li)\s*\/?>/gi, '\n')
    .replace(/<a\s[^>]*href="([^"]*)"[^>]*>([^<]*)<\/a>/gi, (_, href: string, label: string) =>
      label.trim() === href ? href : `${label} ${href}`,
    )
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39);/g, (entity) => {
      const found = Object.entries(ENTITIES).find(([, escaped]) => escaped === entity);
      return found ? found[0] : entity;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
