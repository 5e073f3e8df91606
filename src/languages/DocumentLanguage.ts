/**
 * The language a document's drafts (its categories and Q&A questions) are written in: the document's own,
 * detected from its text, unless the agent is set to one language. A text too short or mixed to tell takes the
 * agent's language, else English.
 */
import type { AgentLanguage, LanguageTag } from "../../schema/Languages.js"
import { detectLanguage } from "./Detect.js"

export const draftLanguage = (
  doc: { readonly title: string; readonly text: string },
  agentLanguage: AgentLanguage
): LanguageTag =>
  agentLanguage !== "auto" ? agentLanguage : detectLanguage(`${doc.title}\n${doc.text}`, { fallback: "en" }).language
