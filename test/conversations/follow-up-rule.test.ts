/** The follow-up rule (`src/conversations/FollowUp.ts`): which messages are read in context, and what is searched. */
import { describe, expect, it } from "vitest"
import { type FollowUpKind, kindOf, rankForPlan, searchesAlone, searchPlan } from "../../src/conversations/FollowUp.js"

const cases: ReadonlyArray<readonly [string, FollowUpKind]> = [
  // follow-ups, English
  ["And for Spain?", "contrast"],
  ["and to Spain?", "contrast"],
  ["What about Spain?", "contrast"],
  ["How about returns?", "contrast"],
  ["Spain?", "contrast"],
  ["How long does that take?", "referring"],
  ["Who founded it?", "referring"],
  ["How many people live there?", "referring"],
  ["Can I return it?", "referring"],
  ["Why?", "referring"],
  ["How much?", "referring"],
  // "take place" is the frame's "happen": two words of its own, pointing back
  ["Where did their first conference take place?", "referring"],
  // follow-ups, Spanish
  ["¿Y para España?", "contrast"],
  ["¿Y en Canadá?", "contrast"],
  ["¿Qué hay de las devoluciones?", "contrast"],
  ["¿Cuánto tarda eso?", "referring"],
  ["¿Y cuánto cuesta esto?", "referring"],
  ["¿Cómo llego allí?", "referring"],
  ["¿Cuál es su precio?", "referring"],
  // self-contained
  ["How do I reset my password?", "alone"],
  ["How long does shipping to Canada take?", "alone"],
  ["Do you ship to Canada?", "alone"],
  ["Is there a clock museum in the granary at Marrowdun?", "alone"],
  ["How long does shipping to Spain take, and what does it cost?", "alone"],
  ["¿Cómo cambio mi contraseña?", "alone"],
  ["¿Cuánto tarda el envío a Canadá?", "alone"]
]

describe("kindOf", () => {
  it.each(cases)("%s is %s", (question, kind) => {
    expect(kindOf(question)).toBe(kind)
  })
})

describe("searchPlan", () => {
  it("searches a follow-up with the earlier question's content words, not the reply's", () => {
    const plan = searchPlan("How long does that take?", ["Which carrier delivers our parcels in Portugal?"])
    expect(plan.kind).toBe("referring")
    expect(plan.query).toBe("How long does that take? carrier delivers parcels portugal")
  })

  it("searches a self-contained question alone, whatever came before", () => {
    const plan = searchPlan("How do I reset my password?", ["Do you ship to Canada?"])
    expect(plan).toEqual({ kind: "alone", query: "How do I reset my password?", own: ["reset", "password"], subject: null })
  })

  it("gives a referring follow-up naming little of its own the earlier subject, and not one naming more", () => {
    expect(searchPlan("Which countries belong to it?", ["What is the Baghdad Pact?"]).subject).toBe("baghdad pact")
    expect(searchPlan("Do you have this shirt in a larger size?", ["What is the Baghdad Pact?"]).subject).toBeNull()
    expect(searchPlan("And to Spain?", ["Do you ship to Canada?"]).subject).toBeNull()
  })

  it("searches a conversation's first message alone", () => {
    expect(searchPlan("And to Spain?", []).query).toBe("And to Spain?")
  })

  it("reads back to the last self-contained question, and no further", () => {
    const plan = searchPlan("And what does it cost?", ["How do I reset my password?", "Do you ship to Canada?", "How long does that take?"])
    expect(plan.query).toBe("And what does it cost? long take ship canada")
  })

  it("adds no word twice, nor the question's own", () => {
    expect(searchPlan("¿Y para España?", ["¿Cuánto tarda el envío a España?"]).query).toBe("¿Y para España? tarda envio")
  })
})

describe("rankForPlan", () => {
  const canada = { id: "qa_canada", text: "Parcels to Canada arrive in six days.", question: "Do you ship to Canada?", score: 0.8 }
  const spain = { id: "qa_spain", text: "Parcels to Spain arrive in ten days.", question: "Do you ship to Spain?", score: 0.7 }
  const spainAlone = { ...spain, score: 0.75 }
  const spainWeak = { ...spain, score: 0.2 }

  it("keeps only the hits naming a contrast follow-up's own subject", () => {
    const plan = searchPlan("And to Spain?", ["Do you ship to Canada?"])
    expect(rankForPlan(plan, [canada, spain])).toEqual([spain])
  })

  it("takes a contrast follow-up's hits from both searches, each at its better score", () => {
    const plan = searchPlan("And to Spain?", ["Do you ship to Canada?"])
    expect(searchesAlone(plan)).toBe(true)
    expect(rankForPlan(plan, [canada, spainWeak], [spainAlone])).toEqual([spainAlone])
    expect(rankForPlan(plan, [canada, spainAlone], [spainWeak])).toEqual([spainAlone])
  })

  it("puts a referring follow-up's hits holding its own words first, keeping the others", () => {
    const plan = searchPlan("Does it take ten?", ["Do you ship to Canada?"])
    expect(plan.kind).toBe("referring")
    expect(rankForPlan(plan, [canada, spain])).toEqual([spain, canada])
  })

  it("leaves a self-contained question's hits as retrieval ranked them", () => {
    const plan = searchPlan("Do you ship to Spain?", [])
    expect(rankForPlan(plan, [canada, spain])).toEqual([canada, spain])
  })
})
