/**
 * The console's only way to the service: the public API on this origin, with
 * the signed-in secret key as `Authorization: Bearer`. A failure carries the
 * error envelope's message, shown as it is.
 */

export type Environment = "test" | "live"

export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly requestId: string | undefined,
    /** A validation failure's `error.field_errors`. */
    readonly fieldErrors?: ReadonlyArray<{ readonly field: string; readonly message: string }>,
    /** `error.param`: the path of the parameter refused (`fields[1].id`). */
    readonly param?: string
  ) {
    super(message)
  }
}

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly hasMore: boolean
  readonly nextCursor: string | null
}

const failureOf = async (response: Response): Promise<ApiFailure> => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API; the pages name the types they read (`import type` from schema/)
  let body: any
  try {
    body = await response.json()
  } catch {
    body = undefined
  }
  const error = body?.error
  return new ApiFailure(
    typeof error?.message === "string" ? error.message : `The service answered ${response.status}`,
    response.status,
    typeof error?.code === "string" ? error.code : "unknown",
    body?.meta?.request_id ?? response.headers.get("request-id") ?? undefined,
    Array.isArray(error?.field_errors) ? error.field_errors : undefined,
    typeof error?.param === "string" ? error.param : undefined
  )
}

export interface CallOptions {
  readonly body?: unknown
  readonly headers?: Record<string, string>
  readonly raw?: BodyInit
  readonly signal?: AbortSignal
}

export const query = (params: Record<string, string | ReadonlyArray<string> | undefined>): string => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === "") continue
    for (const one of typeof value === "string" ? [value] : value) search.append(name, one)
  }
  const text = search.toString()
  return text === "" ? "" : `?${text}`
}

export interface Client {
  readonly environment: Environment
  /** The raw response of a successful call (2xx); otherwise throws `ApiFailure`. */
  readonly fetch: (method: string, path: string, options?: CallOptions) => Promise<Response>
  /** `data` of the envelope. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API; the pages name the types they read (`import type` from schema/)
  readonly call: <A = any>(method: string, path: string, options?: CallOptions) => Promise<A>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API; the pages name the types they read (`import type` from schema/)
  readonly list: <A = any>(path: string, params?: Record<string, string | ReadonlyArray<string> | undefined>) => Promise<Page<A>>
}

export const makeClient = (key: string, environment: Environment): Client => {
  const send = async (method: string, path: string, options: CallOptions = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...options.headers }
    let body: BodyInit | undefined = options.raw
    if (options.body !== undefined) {
      headers["content-type"] = "application/json"
      body = JSON.stringify(options.body)
    }
    const response = await fetch(path, {
      method,
      headers,
      body: body ?? null,
      credentials: "omit",
      cache: "no-store",
      ...(options.signal === undefined ? {} : { signal: options.signal })
    })
    if (!response.ok) throw await failureOf(response)
    return response
  }
  const call = async (method: string, path: string, options?: CallOptions) => {
    const response = await send(method, path, options)
    if (response.status === 204) return undefined
    return (await response.json()).data
  }
  const list = async (path: string, params: Record<string, string | ReadonlyArray<string> | undefined> = {}) => {
    const response = await send("GET", `${path}${query(params)}`)
    const body = await response.json()
    const pagination = body.meta?.pagination
    return {
      data: body.data ?? [],
      hasMore: pagination?.has_more === true,
      nextCursor: pagination?.next_cursor ?? null
    }
  }
  return { environment, fetch: send, call, list }
}

/** The environment a secret key belongs to, from its prefix. */
export const environmentOfKey = (key: string): Environment | undefined =>
  key.startsWith("sk_test_") ? "test" : key.startsWith("sk_live_") ? "live" : undefined

/**
 * Server-sent events read from a fetch body: each event's `data:` lines
 * joined, parsed as JSON and handed to `onEvent` as they arrive, with the
 * event's `id:` when it has one (a resume sends it back as `Last-Event-ID`).
 */
export const readEvents = async (
  body: ReadableStream<Uint8Array>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON from the API; the pages name the types they read (`import type` from schema/)
  onEvent: (event: any, id: string | undefined) => void
): Promise<void> => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  const flush = (block: string) => {
    const lines = block.split(/\r?\n/)
    const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).replace(/^ /, ""))
    if (data.length === 0) return
    const idLine = lines.find((line) => line.startsWith("id:"))
    try {
      onEvent(JSON.parse(data.join("\n")), idLine?.slice(3).trim())
    } catch {
      // a malformed event is skipped; the stream goes on
    }
  }
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    const blocks = buffer.split(/\r?\n\r?\n/)
    buffer = blocks.pop() ?? ""
    blocks.forEach(flush)
  }
  if (buffer.trim() !== "") flush(buffer)
}
