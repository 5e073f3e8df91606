/**
 * An agent's languages: its `language` setting (`auto`, or a tag), the languages its knowledge holds, and the
 * language a text of it is taken to be in (a source when it is read, a question when it is searched).
 *
 * The knowledge's languages are read through the `(agent_id, language)` indexes of passages and Q&A items, one
 * index probe a language (a skip scan), whatever the knowledge's size. A question is detected among them (and
 * the agent's own language): a short Spanish question reads as Hungarian to every detector, never among an
 * agent's English and Spanish.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { AgentId } from "../../schema/Ids.js"
import { AgentLanguage, LanguageTag } from "../../schema/Languages.js"
import { decodeAll, decodeOne } from "../db/Sql.js"
import { detectLanguage } from "./Detect.js"

/** The language setting of an agent as the API shows it. */
export const agentLanguageOf = (agent: { readonly language: AgentLanguage }): AgentLanguage => agent.language

/** What a text too short to tell is taken to be in: the agent's language, English for `auto`. */
export const fallbackOf = (language: AgentLanguage): LanguageTag => (language === "auto" ? "en" : language)

/** The language of a source's text, read for an agent whose setting is `language`. */
export const sourceLanguage = (text: string, language: AgentLanguage): LanguageTag =>
  detectLanguage(text, { fallback: fallbackOf(language) }).language

/**
 * The language a question is searched in: detected among the knowledge's languages and the agent's own (any
 * language when there are none), else the agent's, else the knowledge's first.
 */
export const questionLanguage = (
  question: string,
  language: AgentLanguage,
  knowledge: ReadonlyArray<LanguageTag>
): LanguageTag => {
  const among = [...new Set([...knowledge, ...(language === "auto" ? [] : [language])])]
  const fallback = language !== "auto" ? language : knowledge.includes("en") || knowledge.length === 0 ? "en" : knowledge[0]!
  return detectLanguage(question, { among, fallback }).language
}

const Setting = Schema.Struct({ language: AgentLanguage })
const Tag = Schema.Struct({ language: LanguageTag })

export class AgentLanguages extends Effect.Service<AgentLanguages>()("Languages/AgentLanguages", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    /** The agent's setting; `auto` for an agent not found. */
    const settingOf = (agentId: AgentId | string): Effect.Effect<AgentLanguage> =>
      Effect.map(
        decodeOne(Setting, sql`select language from agents where id = ${agentId}`),
        Option.match({ onNone: () => "auto" as const, onSome: (row) => row.language })
      )

    const distinctIn = (table: "knowledge_chunks" | "qa_items", agentId: string) => {
      const name = sql(table)
      return sql`
        with recursive l(language) as (
          (select language from ${name} where agent_id = ${agentId} and language is not null order by language limit 1)
          union all
          select (select t.language from ${name} as t where t.agent_id = ${agentId} and t.language > l.language
            order by t.language limit 1)
          from l where l.language is not null
        )
        select language from l where language is not null`
    }

    /** The languages the agent's passages and Q&A items are indexed in. */
    const knowledgeOf = (agentId: AgentId | string): Effect.Effect<ReadonlyArray<LanguageTag>> =>
      Effect.map(
        decodeAll(Tag, sql`(${distinctIn("knowledge_chunks", agentId)}) union (${distinctIn("qa_items", agentId)})`),
        (rows) => [...new Set(rows.map((r) => r.language))].sort()
      )

    /** The language `question` is searched in for the agent, with the languages its knowledge holds. */
    const ofQuestion = (agentId: AgentId | string, question: string) =>
      Effect.gen(function* () {
        const [setting, knowledge] = yield* Effect.all([settingOf(agentId), knowledgeOf(agentId)])
        return { language: questionLanguage(question, setting, knowledge), knowledge }
      })

    return { settingOf, knowledgeOf, ofQuestion } as const
  })
}) {}
