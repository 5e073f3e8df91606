/** The component's own texts, from the service's catalogue (`schema/texts/`); the form's texts come from its config. */
import { text } from "../../../schema/texts/Catalogue.js"
import type { Locale } from "./locale.js"

export { type Locale, pickLocale } from "./locale.js"

export interface Localized {
  readonly es?: string | undefined
  readonly en?: string | undefined
}

const textsOf = (locale: Locale) => {
  const t = (key: Parameters<typeof text>[1], values?: Readonly<Record<string, string | number>>) => text(locale, key, values)
  return {
    required: t("form.required"),
    mustCheck: t("form.mustCheck"),
    tooShort: (count: number) => t("form.tooShort", { count }),
    tooLong: (count: number) => t("form.tooLong", { count }),
    email: t("form.email"),
    pattern: t("form.pattern"),
    option: t("form.option"),
    choose: t("form.choose"),
    summary: (count: number) => (count === 1 ? t("form.summaryOne") : t("form.summaryMany", { count })),
    submit: t("form.submit"),
    sending: t("form.sending"),
    success: t("form.success"),
    generic: t("form.generic"),
    rateLimited: (minutes: number) => t("form.rateLimited", { minutes }),
    configFailed: t("form.configFailed"),
    loading: t("form.loading")
  }
}

export type Texts = ReturnType<typeof textsOf>

const made = new Map<Locale, Texts>()

export const textsFor = (locale: Locale): Texts => {
  let texts = made.get(locale)
  if (texts === undefined) made.set(locale, (texts = textsOf(locale)))
  return texts
}

/** A config text in the locale, falling back to the other language. */
export const localized = (text: Localized | null | undefined, locale: Locale): string | undefined =>
  text == null ? undefined : (text[locale] ?? text[locale === "es" ? "en" : "es"])
