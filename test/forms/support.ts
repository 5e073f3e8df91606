/** Helpers shared by the form suites. */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import type { HarnessShape, SeededWorkspace } from "../support/harness.js"

export const createAgent = (h: HarnessShape, key: string) =>
  Effect.map(
    h.call("POST", "/v1/agents", { key, body: { type: "support", name: "Help desk" } }),
    (r) => r.body.data.id as string
  )

/** A contact form: name, email, subject, body, a topic select, a consent checkbox and a hidden page field. */
export const contactForm = (agentId: string, settings: Record<string, unknown> = {}) => ({
  title: { en: "Contact us", es: "Contáctanos" },
  fields: [
    { id: "name", type: "text", label: { en: "Name", es: "Nombre" }, required: true, max_length: 100 },
    { id: "email", type: "email", label: { en: "E-mail", es: "Correo" }, required: true },
    { id: "subject", type: "text", label: { en: "Subject", es: "Asunto" } },
    { id: "body", type: "textarea", label: { en: "Message", es: "Mensaje" }, required: true, min_length: 5 },
    {
      id: "topic",
      type: "select",
      label: { en: "Topic" },
      options: [
        { value: "billing", label: { en: "Billing", es: "Facturación" } },
        { value: "tech", label: { en: "Technical" } }
      ]
    },
    { id: "order", type: "text", label: { en: "Order number" }, pattern: "ORD-[0-9]{4}" },
    { id: "consent", type: "checkbox", label: { en: "I agree" }, required: true },
    { id: "page", type: "hidden", label: { en: "Page" }, default_value: "unknown" }
  ],
  submit_label: { en: "Send", es: "Enviar" },
  success_message: { en: "Thanks!", es: "¡Gracias!" },
  branding: { "--service-accent": "#0055ff", "--service-font": "'Inter', sans-serif" },
  width: "480px",
  appearance: "card",
  target: { type: "ticket", agent_id: agentId },
  settings: {
    allowed_origins: ["https://shop.example.com"],
    honeypot_field: "website",
    rate_limit: { max: 100, window_seconds: 60 },
    ...settings
  }
})

export const goodFields = {
  name: "Ana Pérez",
  email: "ana@example.com",
  subject: "Where is my order?",
  body: "It has not arrived yet.",
  topic: "billing",
  order: "ORD-1234",
  consent: true
}

export const origin = "https://shop.example.com"

/** A workspace with an agent and a contact form (the form's settings merged with `settings`). */
export const withForm = (h: HarnessShape, ws: SeededWorkspace, settings: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const agentId = yield* createAgent(h, ws.secretTest)
    const created = yield* h.call("POST", "/v1/forms", { key: ws.secretTest, body: contactForm(agentId, settings) })
    if (created.status !== 201) return yield* Effect.dieMessage(`form creation failed: ${created.text}`)
    return { agentId, formId: created.body.data.id as string, form: created.body.data }
  })

export const submit = (
  h: HarnessShape,
  formId: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = { origin }
) =>
  h.call("POST", `/api/forms/${formId}/submit`, {
    body,
    headers: { ...(key === undefined ? {} : { "service-api-key": key }), ...headers }
  })

export const ticketsOf = (workspaceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ public_id: string; origin: string; visitor_name: string | null; visitor_email: string | null; subject: string; metadata: unknown }>`
      select public_id, origin, visitor_name, visitor_email, subject, metadata from tickets
      where workspace_id = ${workspaceId} order by created_at, public_id`
  ).pipe(Effect.orDie)

export const eventsOf = (workspaceId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ type: string; body: string }>`
      select type, body from events where workspace_id = ${workspaceId} order by seq`
    return rows.map((r) => ({ type: r.type, body: JSON.parse(r.body) as any }))
  }).pipe(Effect.orDie)

export const setPlan = (workspaceId: string, plan: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`update workspaces set plan = ${plan} where id = ${workspaceId}`).pipe(
    Effect.orDie,
    Effect.asVoid
  )

/** Fills the month's ticket counter up to the free plan's cap (20). */
export const useUpTicketCap = (workspaceId: string, month: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      insert into ticket_usage (workspace_id, environment, month, count) values (${workspaceId}, 'test', ${month}, 20)
      on conflict (workspace_id, environment, month) do update set count = 20`
  ).pipe(Effect.orDie, Effect.asVoid)
