/**
 * A submission's field errors in the visitor's language, through the real server: the body's `locale` (the
 * `<service-form>` sends its own), else `Accept-Language`, else English. The field names and the envelope stay
 * as they are; only the messages change.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Harness, testServer } from "../support/harness.js"
import { goodFields, origin, submit, ticketsOf, withForm } from "./support.js"

const errorsOf = (body: any): Record<string, string> =>
  Object.fromEntries(body.error.field_errors.map((e: { field: string; message: string }) => [e.field, e.message]))

const invalid = { ...goodFields, name: "x".repeat(101), email: "", body: "hey", consent: false }

layer(testServer())("form submit, in the visitor's language", (it) => {
  it.effect("a Spanish submission's field errors are Spanish, an English one's English, the envelope the same", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const spanish = yield* submit(h, formId, ws.formsTest, { fields: invalid, locale: "es" })
      expect(spanish.status, spanish.text).toBe(400)
      expect(spanish.body.error.code).toBe("validation_failed")
      expect(errorsOf(spanish.body)).toEqual({
        name: "Como máximo 100 caracteres",
        email: "Este campo es obligatorio",
        body: "Al menos 5 caracteres",
        consent: "Hay que marcar esta casilla"
      })
      const english = yield* submit(h, formId, ws.formsTest, { fields: invalid, locale: "en" })
      expect(english.status).toBe(400)
      expect(english.body.error.code).toBe(spanish.body.error.code)
      expect(english.body.error.message).toBe(spanish.body.error.message)
      expect(errorsOf(english.body)).toEqual({
        name: "At most 100 characters",
        email: "This field is required",
        body: "At least 5 characters",
        consent: "This box must be checked"
      })
      // a region and the other separator are the same language; one the catalogue lacks is English
      const mexican = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, name: "" }, locale: "es_MX" })
      expect(errorsOf(mexican.body)).toEqual({ name: "Este campo es obligatorio" })
      const french = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, name: "" }, locale: "fr" })
      expect(errorsOf(french.body)).toEqual({ name: "This field is required" })
      const unknown = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, extra: "x", email: "no" }, locale: "es" })
      expect(errorsOf(unknown.body)).toEqual({
        email: "Escribe un correo electrónico válido",
        extra: "Este formulario no tiene ese campo"
      })
      // a good submission with a locale creates its ticket
      const created = yield* submit(h, formId, ws.formsTest, { fields: goodFields, locale: "es" })
      expect(created.status, created.text).toBe(201)
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(1)
    })
  )

  it.effect("without a locale, Accept-Language chooses, by weight; without either, English", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      const body = { fields: { ...goodFields, name: "" } }
      const ask = (acceptLanguage: string | undefined) =>
        Effect.map(
          submit(h, formId, ws.formsTest, body, { origin, ...(acceptLanguage === undefined ? {} : { "accept-language": acceptLanguage }) }),
          (r) => errorsOf(r.body).name
        )
      expect(yield* ask("es-ES,es;q=0.9,en;q=0.8")).toBe("Este campo es obligatorio")
      expect(yield* ask("fr-FR, en;q=0.5, es;q=0.7")).toBe("Este campo es obligatorio")
      expect(yield* ask("fr, de;q=0.5")).toBe("This field is required")
      expect(yield* ask("es;q=0, en")).toBe("This field is required")
      expect(yield* ask(undefined)).toBe("This field is required")
      // the body's locale wins over the header
      const both = yield* submit(h, formId, ws.formsTest, { ...body, locale: "en" }, { origin, "accept-language": "es" })
      expect(errorsOf(both.body).name).toBe("This field is required")
    })
  )

  it.effect("a locale that is no language tag is a field error of its own", () =>
    Effect.gen(function* () {
      const h = yield* Harness
      const ws = yield* h.seed()
      const { formId } = yield* withForm(h, ws)
      for (const locale of ["<script>", 3, "e", "x".repeat(40)]) {
        const reply = yield* submit(h, formId, ws.formsTest, { fields: goodFields, locale })
        expect(reply.status, JSON.stringify(locale)).toBe(400)
        expect(reply.body.error.code).toBe("validation_failed")
        expect(reply.body.error.field_errors.map((e: { field: string }) => e.field)).toEqual(["locale"])
      }
      // a value of the wrong type is told in the locale's language
      const typed = yield* submit(h, formId, ws.formsTest, { fields: { ...goodFields, name: 3 }, locale: "es" })
      expect(errorsOf(typed.body)).toEqual({ name: "Se esperaba un texto o verdadero/falso" })
      expect(yield* ticketsOf(ws.workspace.id)).toHaveLength(0)
    })
  )
})
