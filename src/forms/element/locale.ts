import { isTextLanguage, type TextLanguage } from "../../../schema/texts/Catalogue.js"

/** The language a browser component speaks: one the catalogue has, the form's and the chat's alike. */
export type Locale = TextLanguage

/** `es-MX` → `es`; a language the catalogue lacks → undefined. */
const supported = (tag: string | null | undefined): Locale | undefined => {
  const base = tag?.trim().toLowerCase().split(/[-_]/)[0]
  return base !== undefined && isTextLanguage(base) ? base : undefined
}

/** The `locale` attribute, then the document's `lang`, then the browser's languages, then Spanish. */
export const pickLocale = (attribute: string | null): Locale =>
  supported(attribute) ??
  supported(document.documentElement.lang) ??
  (navigator.languages ?? [navigator.language]).map(supported).find((l) => l !== undefined) ??
  "es"
