/** The component's texts in Spanish and English; the agent's name and welcome message come from its config. */
import type { Locale } from "../../forms/element/locale.js"

export { type Locale, pickLocale } from "../../forms/element/locale.js"

const texts = {
  es: {
    open: (name: string) => `Abrir el chat con ${name}`,
    close: "Cerrar el chat",
    messages: "Mensajes",
    input: "Escribe tu mensaje",
    placeholder: "Escribe tu mensaje…",
    send: "Enviar",
    typing: (name: string) => `${name} está escribiendo…`,
    you: "Tú",
    person: "Persona del equipo",
    sources: "Fuentes",
    helpful: "Útil",
    notHelpful: "No útil",
    talk: "Hablar con una persona",
    emailLabel: "Tu correo electrónico",
    nameLabel: "Tu nombre (opcional)",
    leadIntro: "Déjanos tu correo para poder responderte.",
    escalateIntro: "¿A qué correo te escribimos?",
    continue: "Continuar",
    cancel: "Cancelar",
    badEmail: "Escribe un correo electrónico válido",
    escalated: "Hemos avisado al equipo: una persona te responderá pronto.",
    escalatedEmail: (email: string) => `Hemos avisado al equipo: una persona te responderá en ${email}.`,
    handoffActive: "Una persona del equipo lleva ahora esta conversación.",
    handoffClosed: "La persona del equipo ha terminado: el asistente vuelve a responder.",
    limit: "Este chat no puede responder más este mes. Puedes hablar con una persona.",
    aiWait: (seconds: number) => `El asistente no está disponible ahora. Inténtalo de nuevo en ${seconds} s.`,
    aiLater: "El asistente no está disponible ahora. Inténtalo de nuevo en unos segundos.",
    failed: "No se pudo enviar el mensaje. Inténtalo de nuevo.",
    interrupted: "La respuesta se interrumpió. Inténtalo de nuevo.",
    refused: "Este chat no está disponible en este sitio.",
    loadFailed: "No se pudo cargar el chat.",
    chat: "Chat"
  },
  en: {
    open: (name: string) => `Open chat with ${name}`,
    close: "Close chat",
    messages: "Messages",
    input: "Type your message",
    placeholder: "Type your message…",
    send: "Send",
    typing: (name: string) => `${name} is typing…`,
    you: "You",
    person: "Team member",
    sources: "Sources",
    helpful: "Helpful",
    notHelpful: "Not helpful",
    talk: "Talk to a person",
    emailLabel: "Your e-mail",
    nameLabel: "Your name (optional)",
    leadIntro: "Leave your e-mail so we can get back to you.",
    escalateIntro: "Which e-mail should we answer you at?",
    continue: "Continue",
    cancel: "Cancel",
    badEmail: "Enter a valid e-mail address",
    escalated: "We told the team: a person will answer you soon.",
    escalatedEmail: (email: string) => `We told the team: a person will answer you at ${email}.`,
    handoffActive: "A team member has this conversation now.",
    handoffClosed: "The team member is done: the assistant answers again.",
    limit: "This chat cannot answer any more this month. You can talk to a person.",
    aiWait: (seconds: number) => `The assistant is unavailable right now. Try again in ${seconds} s.`,
    aiLater: "The assistant is unavailable right now. Try again in a few seconds.",
    failed: "The message could not be sent. Please try again.",
    interrupted: "The reply was interrupted. Please try again.",
    refused: "This chat is not available on this site.",
    loadFailed: "The chat could not be loaded.",
    chat: "Chat"
  }
} as const

export type Texts = (typeof texts)[Locale]

export const textsFor = (locale: Locale): Texts => texts[locale]
