/**
 * The two calls the component makes (config and submit), shared with the
 * headless helpers on `window.Service.form`, and the session-storage cache of
 * configs (revalidated with the ETag, so a second page view paints at once).
 */
import type { Localized } from "./texts.js"

export interface ConfigField {
  readonly id: string
  readonly type: "text" | "email" | "textarea" | "select" | "checkbox" | "hidden"
  readonly label: Localized
  readonly help: Localized | null
  readonly placeholder: Localized | null
  readonly required: boolean
  readonly min_length: number | null
  readonly max_length: number | null
  readonly pattern: string | null
  readonly options: ReadonlyArray<{ readonly value: string; readonly label: Localized }> | null
  readonly default_value: string | boolean | null
}

export interface FormConfig {
  readonly id: string
  readonly title: Localized
  readonly fields: ReadonlyArray<ConfigField>
  readonly submit_label: Localized | null
  readonly success_message: Localized | null
  readonly branding: Readonly<Record<string, string>>
  readonly width: number | string
  readonly appearance: "card" | "bare"
}

export type FieldValue = string | boolean

/** A non-2xx answer: the status, the parsed body (the error envelope) and `Retry-After` in seconds. */
export class ServiceFormError extends Error {
  constructor(
    readonly status: number,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API, read by the component
    readonly body: any,
    readonly retryAfter: number | undefined
  ) {
    super(typeof body?.error?.message === "string" ? body.error.message : `HTTP ${status}`)
    this.name = "ServiceFormError"
  }
}

const suffix = "/storage/v1/object/public/widget/v1/"

/** The service's base URL: where this module was served from, minus the storage path. */
export const defaultBaseUrl = (): string => {
  const here = new URL(import.meta.url)
  const at = here.pathname.indexOf(suffix)
  return here.origin + (at > 0 ? here.pathname.slice(0, at) : "")
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API, read by the component
const parse = async (response: Response): Promise<any> => {
  const text = await response.text()
  if (text === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return { error: { message: text.slice(0, 200) } }
  }
}

const failed = async (response: Response) => {
  const retry = Number(response.headers.get("retry-after"))
  return new ServiceFormError(response.status, await parse(response), Number.isFinite(retry) && retry > 0 ? retry : undefined)
}

interface Cached {
  readonly etag: string
  readonly body: { readonly data: FormConfig }
}

const cacheKey = (base: string, formId: string, apiKey: string) => `service-form:${base}:${formId}:${apiKey}`

/** Session storage may be missing or refuse (privacy modes, quota): the cache is then skipped. */
const storage = (): Storage | undefined => {
  try {
    return window.sessionStorage
  } catch {
    return undefined
  }
}

export const cachedConfig = (base: string, formId: string, apiKey: string): Cached | undefined => {
  try {
    const raw = storage()?.getItem(cacheKey(base, formId, apiKey))
    const cached = raw == null ? undefined : (JSON.parse(raw) as Cached)
    return cached?.body?.data?.fields !== undefined ? cached : undefined
  } catch {
    return undefined
  }
}

export interface ConfigRequest {
  readonly apiKey: string
  readonly formId: string
  readonly baseUrl?: string | undefined
}

/**
 * `GET /v1/forms/{form_id}/config`, sending the cached ETag: a 304 answers with
 * the cached body. Resolves with the parsed body; rejects with ServiceFormError.
 */
export const getConfig = async ({ apiKey, formId, baseUrl }: ConfigRequest): Promise<{ data: FormConfig }> => {
  const base = baseUrl ?? defaultBaseUrl()
  const cached = cachedConfig(base, formId, apiKey)
  const headers: Record<string, string> = { "Service-Api-Key": apiKey }
  if (cached !== undefined) headers["If-None-Match"] = cached.etag
  const response = await fetch(`${base}/v1/forms/${encodeURIComponent(formId)}/config`, { headers, mode: "cors" }).catch(
    (cause: unknown) => {
      // the browser hides why: offline, or an answer without CORS (an origin the form does not allow, an unknown form)
      throw new Error(`the form's config could not be fetched (network error, unknown form, or an origin the form does not allow): ${String(cause)}`)
    }
  )
  if (response.status === 304 && cached !== undefined) return cached.body
  if (!response.ok) throw await failed(response)
  const body = await parse(response)
  const etag = response.headers.get("etag")
  if (etag !== null) {
    try {
      storage()?.setItem(cacheKey(base, formId, apiKey), JSON.stringify({ etag, body }))
    } catch {
      // quota exceeded: the next page view loads it again
    }
  }
  return body
}

export interface SubmitRequest extends ConfigRequest {
  readonly fields: Readonly<Record<string, FieldValue>>
  readonly identity?: string | null | undefined
  /** The component's language: the server's field errors come in it. */
  readonly locale?: string | undefined
}

/**
 * `POST /api/forms/{form_id}/submit`. Resolves with the parsed body
 * (`{data: {ticket: {public_id}}}`), or null for the silent 204; rejects with
 * ServiceFormError (a 400's `body.error.field_errors` lists the field errors).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API, read by the component
export const submit = async ({ apiKey, formId, fields, identity, locale, baseUrl }: SubmitRequest): Promise<any> => {
  const base = baseUrl ?? defaultBaseUrl()
  const body = {
    fields,
    ...(identity ? { identity_token: identity } : {}),
    ...(locale === undefined ? {} : { locale })
  }
  const response = await fetch(`${base}/api/forms/${encodeURIComponent(formId)}/submit`, {
    method: "POST",
    headers: { "Service-Api-Key": apiKey, "Content-Type": "application/json" },
    body: JSON.stringify(body),
    mode: "cors"
  }).catch((cause: unknown) => {
    // no readable answer: offline, or refused without CORS headers (an origin the form does not allow)
    throw new Error(`the submission could not be sent (network error, or an origin the form does not allow): ${String(cause)}`)
  })
  if (!response.ok) throw await failed(response)
  return response.status === 204 ? null : parse(response)
}
