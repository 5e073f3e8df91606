/** The text catalogue: every language holds English's keys, each text with English's placeholders. */
import { describe, expect, it } from "@effect/vitest"
import { catalogues, placeholdersOf, text, textLanguages } from "../../schema/texts/Catalogue.js"

describe("the text catalogue", () => {
  const english = catalogues.en

  for (const language of textLanguages) {
    it(`${language} has the same keys as English, none empty`, () => {
      const texts = catalogues[language]
      expect(Object.keys(texts).sort()).toEqual(Object.keys(english).sort())
      for (const [key, value] of Object.entries(texts)) expect(value.trim(), key).not.toBe("")
    })

    it(`${language}'s texts have English's placeholders`, () => {
      const texts = catalogues[language] as Record<string, string>
      for (const [key, value] of Object.entries(english)) {
        expect(placeholdersOf(texts[key] ?? "").sort(), key).toEqual(placeholdersOf(value).sort())
      }
    })
  }

  it("Spanish is Spanish: no text is left as English's, but for names the same in both", () => {
    const same = Object.entries(catalogues.es).filter(([key, value]) => value === catalogues.en[key as keyof typeof english])
    expect(same.map(([key]) => key).sort()).toEqual(["chat.chat", "draft.categoryGeneral"])
  })

  it("fills placeholders, and leaves an unknown one as written", () => {
    expect(text("es", "chat.typing", { name: "Ana" })).toBe("Ana está escribiendo…")
    expect(text("en", "form.tooShort", { count: 3 })).toBe("Enter at least 3 characters")
    expect(text("en", "chat.typing")).toBe("{name} is typing…")
  })
})
