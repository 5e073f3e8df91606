/**
 * Follow-ups read in context through the real server with the `local` model: a short or referring message of a
 * conversation is searched with what its earlier questions were about, and answered from that knowledge, where
 * the same words as the first message of a conversation are not.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { fallbackAnswer } from "../../src/conversations/Answering.js"
import { Harness, testServer } from "../support/harness.js"
import { addQa, createAgent } from "./support.js"

layer(testServer())("follow-ups", (it) => {
  const shop = Effect.gen(function* () {
    const h = yield* Harness
    const ws = yield* h.seed()
    const agentId = yield* createAgent(h, ws.secretTest)
    const canada = yield* addQa(h, ws.secretTest, agentId, "Do you ship to Canada?", "Yes: parcels to Canada arrive in six days.")
    const spain = yield* addQa(h, ws.secretTest, agentId, "Do you ship to Spain?", "Yes: parcels to Spain arrive in ten days.")
    const carrier = yield* addQa(
      h,
      ws.secretTest,
      agentId,
      "Which carrier delivers our parcels in Portugal?",
      "Correos delivers our parcels in Portugal, within four working days."
    )
    const transportista = yield* addQa(
      h,
      ws.secretTest,
      agentId,
      "¿Qué transportista entrega los paquetes en Portugal?",
      "Correos entrega los paquetes en Portugal en cuatro días laborables."
    )
    yield* addQa(h, ws.secretTest, agentId, "Can I return an item?", "Returns are accepted within 30 days of delivery.")
    const ask = (message: string, conversationId?: string) =>
      Effect.map(
        h.call("POST", `/v1/agents/${agentId}/messages`, {
          key: ws.secretTest,
          body: { message, stream: false, ...(conversationId === undefined ? {} : { conversation_id: conversationId }) }
        }),
        (r) => {
          expect(r.status).toBe(201)
          return r.body.data as { conversation_id: string; content: string; outcome: string; sources: Array<{ id: string }> }
        }
      )
    return { ask, canada, spain, carrier, transportista }
  })

  it.effect("'and to Spain?' after a question about Canada is answered from the Spain item alone", () =>
    Effect.gen(function* () {
      const { ask, canada, spain } = yield* shop
      const first = yield* ask("Do you ship to Canada?")
      expect(first.outcome).toBe("answered")
      expect(first.sources[0]!.id).toBe(canada)

      const followUp = yield* ask("And to Spain?", first.conversation_id)
      expect(followUp.conversation_id).toBe(first.conversation_id)
      expect(followUp.outcome).toBe("answered")
      // only what names Spain counts: the Canada item, which the context words also match, is left out
      expect(followUp.sources.map((s) => s.id)).toEqual([spain])
      expect(followUp.content).toContain("ten days")

      // its own word names the item: as a conversation's first message it is answered the same
      const alone = yield* ask("And to Spain?")
      expect(alone.conversation_id).not.toBe(first.conversation_id)
      expect(alone.sources.map((s) => s.id)).toEqual([spain])
    })
  )

  it.effect("'how long does that take?' is searched with the earlier question's subject", () =>
    Effect.gen(function* () {
      const { ask, carrier, transportista } = yield* shop
      const first = yield* ask("Which carrier delivers our parcels in Portugal?")
      expect(first.sources[0]!.id).toBe(carrier)

      const followUp = yield* ask("How long does that take?", first.conversation_id)
      expect(followUp.outcome).toBe("answered")
      expect(followUp.sources[0]!.id).toBe(carrier)
      expect(followUp.content).toContain("four working days")

      // the same words opening a conversation say nothing the knowledge holds
      const alone = yield* ask("How long does that take?")
      expect(alone.outcome).toBe("fallback")
      expect(alone.content).toBe(fallbackAnswer)
      expect(alone.sources).toEqual([])

      // and in Spanish
      const primera = yield* ask("¿Qué transportista entrega los paquetes en Portugal?")
      const seguida = yield* ask("¿Y cuánto tarda eso?", primera.conversation_id)
      expect(seguida.outcome).toBe("answered")
      expect(seguida.sources[0]!.id).toBe(transportista)
      expect((yield* ask("¿Y cuánto tarda eso?")).outcome).toBe("fallback")
    })
  )

  it.effect("a self-contained question after one on another topic is searched alone and stays declined", () =>
    Effect.gen(function* () {
      const { ask } = yield* shop
      const first = yield* ask("Do you ship to Canada?")
      const offTopic = yield* ask("How do I reset my password?", first.conversation_id)
      expect(offTopic.outcome).toBe("fallback")
      expect(offTopic.sources).toEqual([])
    })
  )

  it.effect("'which countries belong to it?' is answered from the passage on the earlier subject, which names them", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const agentId = yield* createAgent(h, ws.secretTest)
      const pact = yield* addQa(
        h,
        ws.secretTest,
        agentId,
        "What is the Baghdad Pact?",
        "The Baghdad Pact binds Turkey, Iraq, Iran, Pakistan and the United Kingdom to a common defence."
      )
      const askHere = (message: string, conversationId?: string) =>
        Effect.map(
          h.call("POST", `/v1/agents/${agentId}/messages`, {
            key: ws.secretTest,
            body: { message, stream: false, ...(conversationId === undefined ? {} : { conversation_id: conversationId }) }
          }),
          (r) => r.body.data as { conversation_id: string; outcome: string; sources: Array<{ id: string }> }
        )
      const first = yield* askHere("What is the Baghdad Pact?")
      expect(first.sources[0]!.id).toBe(pact)
      // the passage holds none of the follow-up's own words: it is about the subject "it" stands for
      const followUp = yield* askHere("Which countries belong to it?", first.conversation_id)
      expect(followUp.outcome).toBe("answered")
      expect(followUp.sources[0]!.id).toBe(pact)
      expect((yield* askHere("Which countries belong to it?")).outcome).toBe("fallback")
    })
  )
})
