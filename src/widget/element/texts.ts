/** The component's texts, from the service's catalogue (`schema/texts/`); the agent's name and welcome message come from its config. */
import { text } from "../../../schema/texts/Catalogue.js"
import type { Locale } from "../../forms/element/locale.js"

export { type Locale, pickLocale } from "../../forms/element/locale.js"

const textsOf = (locale: Locale) => {
  const t = (key: Parameters<typeof text>[1], values?: Readonly<Record<string, string | number>>) => text(locale, key, values)
  return {
    open: (name: string) => t("chat.open", { name }),
    close: t("chat.close"),
    messages: t("chat.messages"),
    input: t("chat.input"),
    placeholder: t("chat.placeholder"),
    send: t("chat.send"),
    typing: (name: string) => t("chat.typing", { name }),
    you: t("chat.you"),
    person: t("chat.person"),
    sources: t("chat.sources"),
    helpful: t("chat.helpful"),
    notHelpful: t("chat.notHelpful"),
    talk: t("chat.talk"),
    emailLabel: t("chat.emailLabel"),
    nameLabel: t("chat.nameLabel"),
    leadIntro: t("chat.leadIntro"),
    escalateIntro: t("chat.escalateIntro"),
    continue: t("chat.continue"),
    cancel: t("chat.cancel"),
    badEmail: t("chat.badEmail"),
    escalated: t("chat.escalated"),
    escalatedEmail: (email: string) => t("chat.escalatedEmail", { email }),
    handoffActive: t("chat.handoffActive"),
    handoffClosed: t("chat.handoffClosed"),
    limit: t("chat.limit"),
    aiWait: (seconds: number) => t("chat.aiWait", { seconds }),
    aiLater: t("chat.aiLater"),
    failed: t("chat.failed"),
    interrupted: t("chat.interrupted"),
    refused: t("chat.refused"),
    loadFailed: t("chat.loadFailed"),
    chat: t("chat.chat")
  }
}

export type Texts = ReturnType<typeof textsOf>

const made = new Map<Locale, Texts>()

export const textsFor = (locale: Locale): Texts => {
  let texts = made.get(locale)
  if (texts === undefined) made.set(locale, (texts = textsOf(locale)))
  return texts
}
