/** The language a browser component speaks: Spanish or English, the form's and the chat's alike. */
export type Locale = "es" | "en"

/** `es-MX` → `es`; anything that is not Spanish or English → undefined. */
const supported = (tag: string | null | undefined): Locale | undefined => {
  const base = tag?.trim().toLowerCase().split(/[-_]/)[0]
  return base === "es" || base === "en" ? base : undefined
}

/** The `locale` attribute, then the document's `lang`, then the browser's languages, then Spanish. */
export const pickLocale = (attribute: string | null): Locale =>
  supported(attribute) ??
  supported(document.documentElement.lang) ??
  (navigator.languages ?? [navigator.language]).map(supported).find((l) => l !== undefined) ??
  "es"
