/** The component's own texts in Spanish and English; the form's texts come from its config. */
import type { Locale } from "./locale.js"

export { type Locale, pickLocale } from "./locale.js"

export interface Localized {
  readonly es?: string | undefined
  readonly en?: string | undefined
}

const texts = {
  es: {
    required: "Este campo es obligatorio",
    mustCheck: "Marca esta casilla para continuar",
    tooShort: (n: number) => `Escribe al menos ${n} caracteres`,
    tooLong: (n: number) => `Escribe como máximo ${n} caracteres`,
    email: "Escribe un correo electrónico válido",
    pattern: "El formato no es válido",
    option: "Elige una de las opciones",
    choose: "Elige una opción",
    summary: (n: number) => (n === 1 ? "Revisa el campo marcado" : `Revisa los ${n} campos marcados`),
    submit: "Enviar",
    sending: "Enviando…",
    success: "¡Gracias! Hemos recibido tu mensaje.",
    generic: "No se pudo enviar el formulario. Inténtalo de nuevo.",
    rateLimited: (minutes: number) => `Demasiados envíos. Inténtalo de nuevo en ${minutes} min.`,
    configFailed: "No se pudo cargar el formulario.",
    loading: "Cargando formulario…"
  },
  en: {
    required: "This field is required",
    mustCheck: "Check this box to continue",
    tooShort: (n: number) => `Enter at least ${n} characters`,
    tooLong: (n: number) => `Enter at most ${n} characters`,
    email: "Enter a valid e-mail address",
    pattern: "The format is not valid",
    option: "Choose one of the options",
    choose: "Choose an option",
    summary: (n: number) => (n === 1 ? "Please check the marked field" : `Please check the ${n} marked fields`),
    submit: "Send",
    sending: "Sending…",
    success: "Thanks! We received your message.",
    generic: "The form could not be sent. Please try again.",
    rateLimited: (minutes: number) => `Too many submissions. Try again in ${minutes} min.`,
    configFailed: "The form could not be loaded.",
    loading: "Loading form…"
  }
} as const

export type Texts = (typeof texts)[Locale]

export const textsFor = (locale: Locale): Texts => texts[locale]

/** A config text in the locale, falling back to the other language. */
export const localized = (text: Localized | null | undefined, locale: Locale): string | undefined =>
  text == null ? undefined : (text[locale] ?? text[locale === "es" ? "en" : "es"])
