import { describe, expect, it } from "vitest"
import { covers } from "../../src/knowledge/Relevance.js"

const passage = (text: string, cosine: number) => ({ text, question: null, cosine })

describe("covers", () => {
  it("does not take one shared word for evidence", () => {
    const troops = passage("The return of our troops from the frontier was completed before the winter set in.", 0.2)
    expect(covers(troops, "Can I return a gift I was given?")).toBe(false)
    const ship = passage("A new ship of the line was launched at the navy yard in Boston this year.", 0.25)
    expect(covers(ship, "Do you ship to Canada?")).toBe(false)
  })

  it("takes a passage holding a fair share of the question's words", () => {
    const holland = passage(
      "A loan of three million florins has been completed in Holland, on terms that give a reasonable hope.",
      0.2
    )
    expect(covers(holland, "What loan was completed in Holland, and for how many florins?")).toBe(true)
    // every word of a short question held, whatever the embedding
    const canada = passage("We ship parcels to Canada within six days.", 0.2)
    expect(covers(canada, "Do you ship to Canada?")).toBe(true)
    expect(covers(passage("The Baghdad Pact binds Turkey, Iraq, Iran, Pakistan and the United Kingdom.", 0.2), "What is the Baghdad Pact?")).toBe(true)
    // both words held, but far apart: a ship in one sentence, Canada in another
    const apart = passage("A new ship of the line was launched at Boston. Our trade with the provinces of Canada grew.", 0.2)
    expect(covers(apart, "Do you ship to Canada?")).toBe(false)
    // two of three held: an embedding near enough is needed too
    const parcels = "We ship parcels to Canada within six days."
    expect(covers(passage(parcels, 0.4), "Do you ship gift cards to Canada?")).toBe(true)
    expect(covers(passage(parcels, 0.2), "Do you ship gift cards to Canada?")).toBe(false)
  })

  it("asks of a question with one content word that the hit holds it, or an embedding close to it", () => {
    expect(covers(passage("Refunds reach your card within five days.", 0.3), "And in Brandun?")).toBe(false)
    expect(covers(passage("The market in Brandun is held on Mondays.", 0.2), "And in Brandun?")).toBe(true)
    expect(covers(passage("Money back reaches your card within five days.", 0.6), "Refunds?")).toBe(true)
  })

  it("counts the held share against all of the question's words", () => {
    const one = passage("The treaty with Spain was ratified and the boundary settled.", 0.3)
    expect(covers(one, "treaty spain florida boundary commissioners survey river sabine mexico texas louisiana")).toBe(false)
    expect(covers(one, "treaty spain boundary settled")).toBe(true)
  })

  it("leaves a question's frame out of what must be covered: how long, how much, what time", () => {
    const delivery = passage("Delivery. Orders arrive within five business days anywhere in Europe.", 0.2)
    expect(covers(delivery, "How long does delivery take?")).toBe(true)
    const shipping = passage("Shipping is free on orders over fifty euros; below that it is four euros ninety.", 0.2)
    expect(covers(shipping, "How much does shipping cost?")).toBe(true)
    const hours = passage("Opening hours: nine to five on weekdays, ten to four on Saturdays.", 0.2)
    expect(covers(hours, "What time do you open?")).toBe(true)
    // the subject still has to be there, and as what the hit is about, not in passing
    expect(covers(delivery, "How long does a refund take?")).toBe(false)
    const mails = passage("State of the Union, 1850\nThe delivery of the mails to the western territories has much improved.", 0.2)
    expect(covers(mails, "How long does delivery take?")).toBe(false)
    expect(covers(passage("Delivery of the mails\nThe mails reach the territories weekly.", 0.2), "How long does delivery take?")).toBe(true)
  })
  it("reads a phrase that works as a preposition as no word of the subject: 'in order to' names no order", () => {
    const panama = passage(
      "We spend as much each year as can be expended in order to complete the Canal, more than fifty-six millions of dollars.",
      0.3
    )
    expect(covers(panama, "Is shipping free for orders over fifty dollars?")).toBe(false)
    const consuls = passage("New legislation should be enacted in order to meet the changed conditions of delivery.", 0.3)
    expect(covers(consuls, "Can I change the delivery address after ordering?")).toBe(false)
    // the noun itself still counts
    const orders = passage("Every order over fifty dollars ships free of charge.", 0.3)
    expect(covers(orders, "Is shipping free for orders over fifty dollars?")).toBe(true)
  })
  it("reads 'take place' as the frame's 'happen': a passage on a first conference answers where it took place", () => {
    const tahlequah = passage("The commissioners held their first conference with the Cherokees at Tahlequah in July.", 0.2)
    expect(covers(tahlequah, "Where did their first conference take place?")).toBe(true)
    // a place held in passing is no conference
    expect(covers(passage("Their first task was to find a place for the new post office.", 0.2), "Where did their first conference take place?")).toBe(false)
  })
})
